"""examples/train_link.py: GraphSAGE link prediction on CiteSeer through
graphferry's DGL edge loader reaches DGL's own loader's test AUC (same model,
epochs and seeds; the loaders' negatives and samples differ, so within a few
points)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("dgl")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_link.py"


def load_example():
    spec = importlib.util.spec_from_file_location("train_link", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_auc_helper():
    import torch

    ex = load_example()
    assert ex.auc(torch.tensor([3.0, 4.0]), torch.tensor([1.0, 2.0])) == 1.0
    assert ex.auc(torch.tensor([1.0]), torch.tensor([1.0])) == 0.5
    assert ex.auc(torch.tensor([1.0, 4.0]), torch.tensor([2.0, 3.0])) == 0.5


@pytest.mark.slow  # two 10-epoch training runs, about a minute on 2 cores
def test_link_auc_matches_dgl():
    ex = load_example()
    ours = ex.run("graphferry", epochs=10, seed=0, log=lambda *_: None)
    theirs = ex.run("dgl", epochs=10, seed=0, log=lambda *_: None)
    assert ours > 0.85, f"graphferry's loader reached test AUC {ours:.4f}"
    assert abs(ours - theirs) < 0.04, f"test AUC: graphferry {ours:.4f}, DGL {theirs:.4f}"
