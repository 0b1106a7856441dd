"""DGL's callable ``exclude`` as an engine input (issue 29): the edge
loader with a callable runs on the engine's pipeline like every edge loader,
the engine calling the callable on its threads for each batch, before
sampling it: its batches are the engine's own exclusion's given the same
edges, made ahead of the consumer, resumable mid-epoch (in a fresh process
too), and an exception in the callable is raised, itself, where its batch
is asked for."""

from __future__ import annotations

import _thread
import threading
import traceback

import pytest
import torch
import torch.multiprocessing as mp

dgl = pytest.importorskip("dgl")

import graphferry.dgl as gdgl  # noqa: E402
from graphferry import GraphferryError  # noqa: E402

NS = dgl.dataloading.negative_sampler
SEEDS = torch.arange(0, 300, 2)  # 150 seed edges: 10 batches of 16 (the last of 6)


def _graph():
    """80 nodes, 300 edges and their reverses (edge e and e + 300)."""
    g = torch.Generator().manual_seed(7)
    src, dst = torch.randint(0, 80, (300,), generator=g), torch.randint(0, 80, (300,), generator=g)
    graph = dgl.graph((torch.cat([src, dst]), torch.cat([dst, src])), num_nodes=80)
    graph.ndata["feat"] = torch.randn(80, 4, generator=g)
    return graph, torch.cat([torch.arange(300, 600), torch.arange(0, 300)])


def _reverse_of(seed_edges):
    """DGL's callable form of exclude='reverse_id' on _graph()."""
    e = seed_edges.to(torch.int64)
    return torch.cat([e, (e + 300) % 600])


def _loader(g, exclude, **kwargs):
    reverse = kwargs.pop("reverse", None)
    base = dgl.dataloading.NeighborSampler([4, 4], prefetch_node_feats=["feat"])
    sampler = gdgl.as_edge_prediction_sampler(
        base, exclude=exclude, reverse_eids=reverse, negative_sampler=NS.Uniform(2)
    )
    kwargs = {"batch_size": 16, "shuffle": True, "seed": 5, **kwargs}
    return gdgl.DataLoader(g, SEEDS, sampler, **kwargs)


def _digest(batch) -> tuple:
    input_nodes, pair, neg, blocks = batch
    out = [input_nodes, pair.edata[dgl.EID], *pair.edges(), *neg.edges(), blocks[0].srcdata["feat"]]
    for b in blocks:
        out += [b.edata[dgl.EID], *b.edges()]
    return tuple(t.clone() for t in out)


def _same(a, b) -> bool:
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


def test_callable_batches_are_the_engines_exclusion():
    """Given the edges the engine's 'reverse_id' excludes, the callable's
    batches are the same batches, epoch after epoch (the same permutation,
    negatives and samples), and the one-off sample() too."""
    g, reverse = _graph()
    calls = []
    ours = _loader(g, lambda e: calls.append(len(e)) or _reverse_of(e), num_workers=2)
    engine = _loader(g, "reverse_id", reverse=reverse, num_workers=2)
    for _ in range(2):
        mine, theirs = [_digest(b) for b in ours], [_digest(b) for b in engine]
        assert len(mine) == len(theirs) == len(ours) == 10
        assert all(_same(a, b) for a, b in zip(mine, theirs))
    assert sorted(calls) == [6] * 2 + [16] * 18  # once per batch of the two epochs
    eids = torch.tensor([3, 250, 17])
    assert _same(_digest(ours.sample(eids, key=9)), _digest(engine.sample(eids, key=9)))
    ours.close()
    engine.close()


class _Boom(Exception):
    pass


def test_an_exception_in_the_callable_is_raised_at_its_batch():
    """The callable's own exception, raised when its batch is asked for
    (the batches before it arrive), chained to the engine's error, which
    names the batch; the one-off sample() raises it too."""
    g, _ = _graph()
    raised = []

    def exclude(seed_edges):
        if bool((seed_edges == 64).any()):  # batch 2 of the unshuffled epoch
            raised.append(_Boom(f"no exclusion for {len(seed_edges)} edges"))
            raise raised[-1]
        return seed_edges

    loader = _loader(g, exclude, shuffle=False)
    it = iter(loader)
    next(it), next(it)
    with pytest.raises(_Boom) as info:
        next(it)
    assert info.value is raised[0]
    cause = info.value.__cause__
    assert isinstance(cause, GraphferryError) and "batch 2" in cause.message, cause
    assert "_Boom: no exclusion for 16 edges" in cause.message
    assert any("exclude" in frame.name for frame in traceback.extract_tb(info.value.__traceback__))
    with pytest.raises(_Boom) as info:
        loader.sample(torch.tensor([64, 1]))
    assert info.value is raised[-1] and info.value.__cause__ is not None
    # the loader goes on: the next epoch runs to the same batch
    assert sum(1 for _ in zip(range(2), loader)) == 2
    loader.close()


def test_made_ahead_on_the_engines_threads():
    """The callable runs on a thread of the engine's, for batch 1 before the
    consumer asks for it."""
    g, _ = _graph()
    threads, second = set(), threading.Event()

    def exclude(seed_edges):
        threads.add(threading.get_ident())
        if bool((seed_edges == 32).any()):  # batch 1 of the unshuffled epoch
            second.set()
        return seed_edges

    loader = _loader(g, exclude, shuffle=False)
    it = iter(loader)
    next(it)
    assert second.wait(60), "batch 1's exclusion was not made while the consumer held batch 0"
    assert threading.get_ident() not in threads
    assert len(list(it)) == 9
    loader.close()


@pytest.mark.usefixtures("sigint_raises_keyboardinterrupt")
def test_ctrl_c_and_close_while_the_callable_runs():
    """Ctrl-C in the loop while the engine waits on the callable raises
    KeyboardInterrupt; a close from another thread ends the consumer's wait
    with an error saying so, and returns once the callable has."""
    g, _ = _graph()
    entered, release = threading.Event(), threading.Event()

    def exclude(seed_edges):
        if bool((seed_edges == 64).any()):
            entered.set()
            release.wait(60)
        return seed_edges

    loader = _loader(g, exclude, shuffle=False)
    it = iter(loader)
    next(it), next(it)
    armed = threading.Event()  # the consumer is about to wait for batch 2
    interrupter = threading.Thread(target=lambda: entered.wait(60) and armed.wait(60) and _thread.interrupt_main())
    interrupter.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            armed.set()
            next(it)
        interrupter.join()
        closer = threading.Thread(target=loader.close)
        closer.start()
        with pytest.raises(Exception, match="closed"):
            next(it)
    finally:
        release.set()
    closer.join(60)
    assert not closer.is_alive()


def _epochs(g, loader, k=None):
    """Two epochs' digests; with k, the first k and the state after them."""
    out = []
    for _ in range(2):
        for batch in loader:
            out.append(_digest(batch)[:4])
            if len(out) == k:
                return out, loader.state_dict()
    return out, None


def _resumed(state):
    g, _ = _graph()
    loader = _loader(g, _reverse_of)
    loader.load_state_dict(state)
    out = []
    for _ in range(2 - state["epoch"]):
        out += [_digest(b)[:4] for b in loader]
    assert loader.stats().total.sampler.batches == len(out)  # only the rest was made
    loader.close()
    return out


def _child(state, results):
    try:
        results.put(("ok", [[t.tolist() for t in d] for d in _resumed(state)]))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


def test_state_dict_mid_epoch_resumes_the_remaining_batches():
    """state_dict() after k batches, load_state_dict() on a new loader (and
    in a fresh process) yields exactly the batches not yet yielded."""
    g, _ = _graph()
    whole, _ = _epochs(g, _loader(g, _reverse_of))
    assert len(whole) == 20
    for k in (3, 14):
        first, state = _epochs(g, _loader(g, _reverse_of), k)
        assert state["epoch"] == k // 10 and state["batches_yielded"] == k % 10
        rest = _resumed(state)
        assert len(rest) == 20 - k and all(_same(a, b) for a, b in zip(first + rest, whole))
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    p = ctx.Process(target=_child, args=(state, results), daemon=True)
    p.start()
    try:
        status, rest = results.get(timeout=120)
    finally:
        p.join(timeout=10)
        if p.is_alive():
            p.kill()
    assert status == "ok", rest
    rest = [tuple(torch.tensor(t, dtype=w.dtype) for t, w in zip(d, whole[0])) for d in rest]
    assert all(_same(a, b) for a, b in zip(first + rest, whole)) and len(rest) == 6
