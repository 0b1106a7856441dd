"""A loader refuses, by name, a state that is not its own (issue 34):
edited numbers, another graph with the same seeds, another kind of loader,
a fingerprint that is not a dict."""

from __future__ import annotations

import pytest
import torch
from contract_kinds import CORA

import graphferry

SEEDS = torch.arange(0, 2708, 5)


def _loader(graph, batch_size: int = 64):
    return graphferry.Loader(graph, SEEDS, [3, 2], batch_size=batch_size, shuffle=True, seed=4)


@pytest.fixture(scope="module")
def state():
    g = graphferry.Graph.open(CORA)
    loader = _loader(g)
    it = iter(loader)
    next(it), next(it)
    out = loader.state_dict()
    loader.close()
    g.close()
    return out


@pytest.fixture
def loader():
    g = graphferry.Graph.open(CORA)
    lo = _loader(g)
    yield lo
    lo.close()
    g.close()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"epoch": -1}, "'epoch' must be an int in"),
        ({"epoch": 2**63, "next_epoch": 2**63 + 1}, "must be an int in"),
        ({"epoch": 2**64}, "'epoch' must be an int in"),
        ({"next_epoch": -3}, "'next_epoch' must be an int in"),
        ({"epoch": 1_000_000}, "not before its next epoch"),
        ({"batches_yielded": -1}, "outside"),
        ({"batches_yielded": True}, "outside"),
        ({"num_batches": 3}, "have 3 batches; this loader's have"),
        ({"fingerprint": "x"}, "'fingerprint' must be a dict"),
        ({"kind": "graphferry.dgl.DataLoader"}, "saved by a 'graphferry.dgl.DataLoader', not by a 'graphferry.Loader'"),
        ({"version": 3}, "version 3 is not supported"),
    ],
)
def test_an_edited_state_is_refused(loader, state, edit, message):
    with pytest.raises(ValueError, match=message):
        loader.load_state_dict(dict(state, **edit))
    loader.load_state_dict(state)  # the loader is as usable as before


def test_a_state_of_another_graph_with_the_same_seeds_is_refused(state):
    src = torch.randint(0, 2708, (5000,), generator=torch.Generator().manual_seed(1))
    dst = torch.randint(0, 2708, (5000,), generator=torch.Generator().manual_seed(2))
    other = graphferry.Graph.from_coo(src, dst, num_nodes=2708)
    lo = _loader(other)
    with pytest.raises(ValueError, match="graph"):
        lo.load_state_dict(state)
    lo.close()
    other.close()


def test_a_core_state_given_to_a_dgl_loader_is_refused(state, cora_dgl):
    import dgl

    import graphferry.dgl as gdgl

    sampler = dgl.dataloading.NeighborSampler([3, 2])
    lo = gdgl.DataLoader(cora_dgl, SEEDS, sampler, batch_size=64, shuffle=True, seed=4)
    with pytest.raises(ValueError, match="saved by a 'graphferry.Loader', not by a 'graphferry.dgl.DataLoader'"):
        lo.load_state_dict(state)
    lo.close()
