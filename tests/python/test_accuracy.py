"""End-to-end accuracy: GraphSAGE trained through graphferry's loaders matches DGL's own loader.

For Cora and CiteSeer (Planetoid public splits; testdata.py finds them, in the
repository or the shared datasets), five seeds each through

* graphferry.dgl.DataLoader (DGL model over blocks),
* graphferry.pyg.NeighborLoader (PyG model over edge_index),
* dgl.dataloading.DataLoader (the baseline: same model, loop and hyperparameters as the first).

Asserts that the mean test accuracy (at the best validation epoch) of each graphferry loader
is within 2 points of the baseline's and above a floor. ``pytest -s`` prints the table;
``GRAPHFERRY_ACCURACY_REPORT=path.json`` also writes it as JSON. Several minutes on 2 cores:
marked slow, run by ``make test-accuracy``, not ``make test``. The examples' smoke test below
runs in ``make test``.
"""

import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_harness as harness  # noqa: E402

pytest.importorskip("dgl", reason="DGL is needed for the DGL loader and the baseline")
pytest.importorskip("torch_geometric", reason="torch_geometric is needed for the PyG loader")

SEEDS = range(5)
MAX_GAP = 0.02  # |mean(graphferry) - mean(DGL)|
FLOOR = {"cora": 0.77, "citeseer": 0.66}
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_results = []  # every run so far, for the JSON report


def _require(name):
    path = harness.dataset_path(name)
    if not os.path.isfile(os.path.join(path, "indptr.npy")):
        pytest.skip(f"dataset {name!r} not found (set GRAPHFERRY_DATASETS to the datasets folder)")
    return path


def _write_report():
    path = os.environ.get("GRAPHFERRY_ACCURACY_REPORT")
    if not path:
        return
    report = {
        "hparams": {name: dict(vars(hp), fanouts=list(hp.fanouts)) for name, hp in harness.HPARAMS.items()},
        "seeds": list(SEEDS),
        "max_gap": MAX_GAP,
        "floor": FLOOR,
        "summary": harness.summarize(_results),
    }
    with open(path, "w") as f:
        json.dump(report, f, indent=2)


@pytest.mark.slow  # make test-accuracy: 30 training runs of 50 epochs per dataset
@pytest.mark.parametrize("name", ["cora", "citeseer"])
def test_graphsage_accuracy_matches_dgl(name):
    _require(name)
    ds = harness.load_dataset(name)
    runs = [harness.train(ds, kind, seed) for kind in harness.LOADERS for seed in SEEDS]
    _results.extend(runs)
    summary = harness.summarize(runs)[name]
    print(f"\n{harness.HPARAMS[name]}\n" + harness.format_table({name: summary}))
    _write_report()

    baseline = summary["dgl"]["mean_test_acc"]
    for kind in ("graphferry-dgl", "graphferry-pyg"):
        acc = summary[kind]["mean_test_acc"]
        assert abs(acc - baseline) <= MAX_GAP, (
            f"{name}: {kind} mean test accuracy {100 * acc:.2f}% is more than {100 * MAX_GAP:.0f} points "
            f"from DGL's loader ({100 * baseline:.2f}%)"
        )
        assert acc >= FLOOR[name], f"{name}: {kind} mean test accuracy {100 * acc:.2f}% < {100 * FLOOR[name]:.0f}%"


@pytest.mark.parametrize(
    "script,loader",
    [
        ("train_dgl.py", "graphferry"),
        ("train_dgl.py", "dgl"),
        ("train_pyg.py", "graphferry"),
        ("train_pyg.py", "graphferry-nodeloader"),
    ],
)
def test_example_runs(script, loader, tmp_path):
    """The examples run on a converted dataset and print their final line."""
    import graphferry

    src = _require("cora")
    dst = tmp_path / "cora"
    graphferry.convert_npy(src, dst)
    proc = subprocess.run(
        [
            sys.executable,
            os.path.join(REPO, "examples", script),
            "--dataset",
            str(dst),
            "--epochs",
            "3",
            "--loader",
            loader,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("test accuracy: ") and last.endswith("%"), proc.stdout[-2000:]
