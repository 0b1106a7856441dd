"""Loaders shared by threads (issue 34): two threads iterating one loader,
or sharing one iterator, get every batch once or the documented error for
an epoch another one superseded; never a short epoch that ends normally,
never a batch lost or given twice, never another error."""

from __future__ import annotations

import threading

import pytest
import torch
from contract_kinds import CORA, digest

import graphferry
from graphferry.errors import GF_ESTATE, GraphferryError

TRIALS = 30
SEEDS = torch.arange(0, 2708, 3)


@pytest.fixture(scope="module")
def graph():
    g = graphferry.Graph.open(CORA)
    yield g
    g.close()


def _loader(graph, threads: int = 1) -> graphferry.Loader:
    return graphferry.Loader(graph, SEEDS, [4, 3], batch_size=64, shuffle=True, seed=3, num_threads=threads)


def test_two_threads_iterating_one_loader(graph):
    """The newer epoch is whole and correct; the older one either ended
    whole before it started or raises the superseded error."""
    ref = _loader(graph)
    want = {e: [digest(b) for b in ref.epoch(e)] for e in range(2 * TRIALS)}
    ref.close()
    loader = _loader(graph)
    for trial in range(TRIALS):
        old_epoch, new_epoch = 2 * trial, 2 * trial + 1
        got: dict[str, object] = {}
        started = threading.Event()

        def older(got=got, started=started, old_epoch=old_epoch):
            it = loader.epoch(old_epoch)
            out = []
            try:
                for b in it:
                    out.append(digest(b))
                    started.set()
                got["old"] = out
            except GraphferryError as err:
                got["old"] = err
            finally:
                started.set()

        t = threading.Thread(target=older)
        t.start()
        started.wait(30)
        got["new"] = [digest(b) for b in loader.epoch(new_epoch)]
        t.join(60)
        assert not t.is_alive()
        assert got["new"] == want[new_epoch], f"trial {trial}: the newer epoch is not whole"
        old = got["old"]
        if isinstance(old, GraphferryError):
            assert old.code == GF_ESTATE and "superseded" in str(old), f"trial {trial}: {old!r}"
        else:
            assert old == want[old_epoch], f"trial {trial}: the older epoch ended short ({len(old)} batches)"
    loader.close()


@pytest.mark.parametrize("framework", ["core", "dgl", "pyg"])
def test_two_threads_sharing_one_iterator(graph, framework, cora_dgl, cora_pyg):
    """Each batch of the epoch reaches exactly one of the threads."""
    if framework == "core":
        make = lambda: _loader(graph, threads=2)  # noqa: E731
    elif framework == "dgl":
        import dgl

        import graphferry.dgl as gdgl

        sampler = dgl.dataloading.NeighborSampler([4, 3], prefetch_node_feats=["feat"])
        make = lambda: gdgl.DataLoader(cora_dgl, SEEDS, sampler, batch_size=64, shuffle=True, seed=3)  # noqa: E731
    else:
        import graphferry.pyg as gpyg

        make = lambda: gpyg.NeighborLoader(  # noqa: E731
            cora_pyg, [4, 3], input_nodes=SEEDS, batch_size=64, shuffle=True, seed=3
        )
    ref, loader = make(), make()  # the same seed: epoch k of one is epoch k of the other
    for trial in range(TRIALS // 3):
        want = sorted(digest(b) for b in ref)
        it = iter(loader)
        seen: list[list[str]] = [[], []]
        errors: list[BaseException] = []

        def take(k: int, it=it, seen=seen, errors=errors) -> None:
            try:
                for b in it:
                    seen[k].append(digest(b))
            except BaseException as err:  # noqa: BLE001 - every error is a failure here
                errors.append(err)

        threads = [threading.Thread(target=take, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, f"trial {trial}: {errors!r}"
        assert sorted(seen[0] + seen[1]) == want, f"trial {trial}: a batch was lost or given twice"
    ref.close()
    loader.close()
