"""The wheel with its extras, as `pip install "graphferry[dgl]"` and
`pip install "graphferry[pyg]"` give it: each into an empty virtual
environment, with every dependency pip resolves from the package index, then,
from an empty folder: `graphferry --version`, `graphferry info` (the
framework imports, the other is not installed), one trained epoch of
GraphSAGE on the shipped Cora, and every documented example
(tests/python/docsnippets.py: an example that needs the framework not
installed is skipped there; between the two environments every example
runs).

pip resolves the extra against the package index once into a wheelhouse
(build/wheelhouse/<extra>: `pip download`, about 3 GB the first time, then
only the index's metadata), and installs from there; the time from the
install's start to the end of the first epoch is printed and written to
build/wheelhouse/<extra>.json (a measure, not asserted).

    make test-wheel-fresh      (GRAPHFERRY_TEST_FRESH=1; not in make test: the downloads)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DIST = Path(os.environ.get("GRAPHFERRY_DIST", REPO / "dist"))
WHEELHOUSE = REPO / "build" / "wheelhouse"
FRAMEWORK = {"dgl": "dgl", "pyg": "torch_geometric"}

pytestmark = pytest.mark.skipif(
    os.environ.get("GRAPHFERRY_TEST_FRESH") != "1", reason="downloads the extras' dependencies: make test-wheel-fresh"
)

# One trained epoch, as a user's script would run it.
EPOCH = {
    "dgl": """
import time, torch, torch.nn.functional as F, dgl, graphferry, graphferry.dgl
cora = graphferry.Graph.open(graphferry.dataset_path("cora"))
src, dst, _ = cora.edges()
g = dgl.graph((src, dst), num_nodes=cora.num_nodes)
g.ndata["feat"], g.ndata["label"] = cora.get_node_data("feat"), cora.get_node_data("label")
layers = torch.nn.ModuleList([dgl.nn.SAGEConv(1433, 64, "mean"), dgl.nn.SAGEConv(64, 7, "mean")])
opt = torch.optim.Adam(layers.parameters(), lr=0.01)
sampler = dgl.dataloading.NeighborSampler([10, 10], prefetch_node_feats=["feat"], prefetch_labels=["label"])
steps = 0
for _, _, blocks in graphferry.dgl.DataLoader(g, cora.train_idx, sampler, batch_size=32, shuffle=True):
    x = blocks[0].srcdata["feat"]
    for layer, block in zip(layers, blocks):
        x = layer(block, x)
    loss = F.cross_entropy(x, blocks[-1].dstdata["label"])
    opt.zero_grad(); loss.backward(); opt.step(); steps += 1
print(f"epoch: {steps} steps, last loss {loss.item():.3f}, at {time.time()}")
""",
    "pyg": """
import time, torch, torch.nn.functional as F, graphferry, graphferry.pyg
from torch_geometric.data import Data
from torch_geometric.nn import GraphSAGE
cora = graphferry.Graph.open(graphferry.dataset_path("cora"))
src, dst, _ = cora.edges()
data = Data(x=cora.get_node_data("feat"), y=cora.get_node_data("label"), edge_index=torch.stack([src, dst]))
model = GraphSAGE(1433, 64, num_layers=2, out_channels=7)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
steps = 0
for batch in graphferry.pyg.NeighborLoader(data, [10, 10], input_nodes=cora.train_idx, batch_size=32, shuffle=True):
    out = model(batch.x, batch.edge_index)[: batch.batch_size]
    loss = F.cross_entropy(out, batch.y[: batch.batch_size])
    opt.zero_grad(); loss.backward(); opt.step(); steps += 1
print(f"epoch: {steps} steps, last loss {loss.item():.3f}, at {time.time()}")
""",
}

_REPORTS: dict[str, dict[str, list[str]]] = {}


def _wheel() -> Path:
    found = sorted(DIST.glob("graphferry-*-py3-none-manylinux_*_x86_64.whl"))
    if len(found) != 1:
        pytest.fail(f"expected one wheel in {DIST}, found {[p.name for p in found]}: run make wheel")
    return found[0]


def _run(cmd, cwd, env, timeout=1800) -> str:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd}: exit {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


@pytest.mark.parametrize("extra", ["dgl", "pyg"])
def test_fresh_install(extra, tmp_path):
    wheel = _wheel()
    house = WHEELHOUSE / extra
    house.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHFERRY_", "PYTHON", "VIRTUAL_ENV"))}
    # What pip picks from the package index for the extra (downloaded once, kept in the wheelhouse).
    _run([sys.executable, "-m", "pip", "download", "--quiet", "--dest", house, f"{wheel}[{extra}]"], tmp_path, env)
    for old in house.glob("graphferry-*.whl"):
        old.unlink()  # the wheel under test comes from dist/, not an earlier build
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], tmp_path, env)
    env["PATH"] = f"{venv / 'bin'}:/usr/bin:/bin"
    empty = tmp_path / "empty"
    empty.mkdir()
    start = time.time()
    _run([venv / "bin" / "pip", "install", "--quiet", "--no-index", "--find-links", house, f"{wheel}[{extra}]"],
         empty, env)  # fmt: skip
    installed = time.time()
    epoch = _run([venv / "bin" / "python", "-c", EPOCH[extra]], empty, env)
    trained = float(re.search(r"at ([\d.]+)$", epoch.strip()).group(1))
    timing = {"extra": extra, "install_s": round(installed - start, 1), "to_first_epoch_s": round(trained - start, 1)}
    (WHEELHOUSE / f"{extra}.json").write_text(json.dumps(timing) + "\n")
    print(f"\n[{extra}] pip install {timing['install_s']} s, pip install to a first trained epoch "
          f"{timing['to_first_epoch_s']} s ({epoch.strip()})")  # fmt: skip

    assert _run(["graphferry", "--version"], empty, env).startswith(f"graphferry {wheel.name.split('-')[1]} (library ")
    facts = json.loads(_run(["graphferry", "info", "--json", "--no-gpu"], empty, env))
    other = next(f for e, f in FRAMEWORK.items() if e != extra)
    assert facts[f"{FRAMEWORK[extra]}_imports"] == "yes" and facts["torch_imports"] == "yes", facts
    assert facts[f"{other}_imports"] == "not installed", facts
    freeze = _run([venv / "bin" / "pip", "freeze"], empty, env)
    print(f"[{extra}] " + ", ".join(line for line in freeze.splitlines() if re.match(r"(torch|dgl|numpy)[=_-]", line)))

    out = _run([venv / "bin" / "python", REPO / "tests" / "python" / "docsnippets.py", "--missing-ok", other],
               empty, env)  # fmt: skip
    _REPORTS[extra] = json.loads(out.split("docsnippets report: ", 1)[1].splitlines()[0])
    shutil.rmtree(venv)  # 5 GB


def test_every_example_ran_in_one_of_the_environments():
    if set(_REPORTS) != set(FRAMEWORK):
        pytest.fail(f"the fresh installs did not both finish: {sorted(_REPORTS)}")
    dgl, pyg = _REPORTS["dgl"], _REPORTS["pyg"]
    assert dgl.keys() == pyg.keys()
    for page in dgl:
        assert len(dgl[page]) == len(pyg[page]), page
        for i, (a, b) in enumerate(zip(dgl[page], pyg[page])):
            assert "ran" in (a, b) or "c: ran" in (a, b), f"{page} block {i} ran in neither: {a!r}, {b!r}"
