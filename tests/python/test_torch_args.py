"""torch DataLoader arguments that concern worker processes, which
graphferry does not start: each either does what torch documents or is
refused by name (issue 29)."""

from __future__ import annotations

import pytest
import torch

SEEDS = torch.arange(0, 2708, 5)


def _seed_worker(worker_id: int) -> None:  # the usual reproducibility recipe
    torch.manual_seed(worker_id)


def test_dgl_worker_init_fn_is_refused_by_name(cora_dgl):
    import dgl

    import graphferry.dgl as gdgl

    sampler = dgl.dataloading.NeighborSampler([3, 2])
    with pytest.raises(ValueError, match="worker_init_fn: graphferry starts no worker processes"):
        gdgl.DataLoader(cora_dgl, SEEDS, sampler, batch_size=64, num_workers=2, worker_init_fn=_seed_worker)
    gdgl.DataLoader(cora_dgl, SEEDS, sampler, batch_size=64, num_workers=2, worker_init_fn=None).close()


def test_pyg_worker_init_fn_is_refused_by_name(cora_pyg):
    import graphferry.pyg as gpyg

    with pytest.raises(ValueError, match="worker_init_fn: graphferry starts no worker processes"):
        gpyg.NeighborLoader(cora_pyg, [3, 2], input_nodes=SEEDS, batch_size=64, worker_init_fn=_seed_worker)
    with pytest.raises(ValueError, match="worker_init_fn"):
        gpyg.LinkNeighborLoader(cora_pyg, [3, 2], batch_size=64, worker_init_fn=_seed_worker)


def test_timeout_bounds_the_wait_for_each_batch(cora_dgl, cora_pyg):
    """torch's ``timeout``: the seconds a next() waits for a batch (0: no
    bound); a negative one is refused with torch's words."""
    import dgl

    import graphferry.dgl as gdgl
    import graphferry.pyg as gpyg

    sampler = dgl.dataloading.NeighborSampler([3, 2])
    lo = gdgl.DataLoader(cora_dgl, SEEDS, sampler, batch_size=64, timeout=2.5)
    assert [engine.wait_timeout for engine in lo._loaders] == [2.5]
    assert sum(1 for _ in lo) == len(lo)  # batches come well within it
    lo.close()
    lo = gpyg.NeighborLoader(cora_pyg, [3, 2], input_nodes=SEEDS, batch_size=64)
    assert [engine.wait_timeout for engine in lo._loaders] == [0.0]
    lo.close()
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        gpyg.NeighborLoader(cora_pyg, [3, 2], input_nodes=SEEDS, batch_size=64, timeout=-1)


def test_a_batch_later_than_timeout_raises_torchs_error_and_the_epoch_goes_on(cora_dgl):
    """The engine makes no batch while the exclude callable (run on its
    threads) is held: next() gives up after ``timeout`` with torch's
    RuntimeError; released, the same epoch yields every batch."""
    import threading

    import dgl

    import graphferry.dgl as gdgl

    release = threading.Event()

    def exclude(eids):
        release.wait(120)
        return eids

    sampler = dgl.dataloading.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler([2]),
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(1),
        exclude=exclude,
    )
    lo = gdgl.DataLoader(cora_dgl, torch.arange(0, cora_dgl.num_edges(), 97), sampler, batch_size=32, timeout=0.2)
    it = iter(lo)
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0\.2 seconds"):
        next(it)
    release.set()
    assert sum(1 for _ in it) == len(lo)
    lo.close()
