"""The loader contract, once for every loader kind of both frameworks
(contract_kinds.KINDS): what graphferry promises of any loader, checked the
same way for each.

For every kind:

* made ahead: once the consumer has its first batch and asks for nothing,
  the engine goes on making the next ones (its statistics count them);
* resume: ``state_dict()`` taken mid-epoch, handed to a fresh process that
  opens the same loader and calls ``load_state_dict()``, yields exactly
  the batches the interrupted epoch had not yielded, bit for bit;
* the host hand-off: ``pin_memory=True`` (PyG and the core loader; DGL pins
  only for a CUDA device, as DGL does) gives the same batches through the
  transfer path;
* Ctrl-C: SIGINT while the loop runs raises KeyboardInterrupt in it, and
  the loader stays usable;
* close from another thread: the iterating thread gets an error that says
  the loader was closed (never a hang, a crash or a silent end);
* statistics: every stage (sampler, loader, consumer) counted every batch.

A kind that cannot meet a point must refuse it by name when it is made;
none does today.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import warnings

import contract_kinds as ck
import pytest
import torch

from conftest import wait_made_ahead

pytest.importorskip("dgl")
pytest.importorskip("torch_geometric")

KINDS = sorted(ck.KINDS)
RESUME_AT = 3  # batches of the second epoch yielded before the state is saved
WATCHDOG_S = 60.0  # a hang detector, not a timing bound


def _epochs(loader, n: int) -> list[list[str]]:
    return [[ck.digest(b) for b in loader] for _ in range(n)]


@pytest.fixture(scope="module")
def resumed(tmp_path_factory):
    """For every kind: the digests of two uninterrupted epochs, and of what
    a fresh process yields after loading the state saved RESUME_AT batches
    into the second (or the error that stopped either)."""
    states, full, errors = {}, {}, {}
    for kind in KINDS:
        try:
            loader = ck.open_kind(kind)
            first = [ck.digest(b) for b in loader]
            second = []
            for i, b in enumerate(loader):
                if i == RESUME_AT - 1:  # RESUME_AT batches yielded
                    states[kind] = loader.state_dict()
                second.append(ck.digest(b))
            full[kind] = (first, second)
            loader.close()
        except Exception as err:  # noqa: BLE001 - reported by the kind's test
            errors[kind] = f"{type(err).__name__}: {err}"
    d = tmp_path_factory.mktemp("contract")
    torch.save(states, d / "states.pt")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ck.HERE), *sys.path]))
    proc = subprocess.run(
        [sys.executable, str(ck.HERE / "contract_kinds.py"), str(d / "states.pt"), str(d / "out.json")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return full, json.loads((d / "out.json").read_text()), errors


@pytest.mark.parametrize("kind", KINDS)
def test_resume_in_a_fresh_process(resumed, kind):
    full, child, errors = resumed
    assert kind not in errors, errors.get(kind)
    first, second = full[kind]
    assert len(second) > RESUME_AT + 1, f"{kind}: too few batches ({len(second)}) for the check"
    assert first != second, f"{kind}: two epochs gave the same batches (not shuffled?)"
    got = child[kind]
    assert not isinstance(got, dict), got.get("error")
    assert got == second[RESUME_AT:]


@pytest.mark.parametrize("kind", KINDS)
def test_batches_are_made_ahead(kind):
    loader = ck.open_kind(kind)
    try:
        it = iter(loader)
        next(it)
        # the consumer holds batch 0 and asks for nothing: the engine's
        # loader stage finishes the next ones on its own
        assert wait_made_ahead(loader, batches=2, timeout=WATCHDOG_S) >= 2
    finally:
        loader.close()


@pytest.mark.parametrize("kind", KINDS)
def test_statistics_count_every_stage(kind):
    loader = ck.open_kind(kind)
    try:
        n = sum(1 for _ in loader)
        cur = loader.stats().current
        assert cur.sampler.batches == cur.loader.batches == cur.consumer.batches == n > 0
        assert cur.sampler.busy > 0 and cur.loader.busy > 0
    finally:
        loader.close()


@pytest.mark.parametrize("kind", [k for k in KINDS if ck.KINDS[k][0] == "pyg"])
def test_pin_memory_hands_over_the_same_batches(kind):
    plain = ck.open_kind(kind)
    want = [ck.digest(b) for b in plain]
    plain.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "no accelerator" warning on a CPU machine
        pinned = ck.open_kind(kind, pin_memory=True)
    try:
        assert getattr(pinned, "_transfer", None) is not None, "pin_memory=True took no transfer path"
        got = []
        for b in pinned:
            got.append(ck.digest(b))
            if torch.cuda.is_available():
                tensors = [t for t in _tensors(b)]
                assert tensors and all(t.is_pinned() for t in tensors)
        assert got == want
    finally:
        pinned.close()


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _tensors(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _tensors(x)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.usefixtures("sigint_raises_keyboardinterrupt")
def test_ctrl_c_ends_the_loop_and_the_loader_stays_usable(kind):
    loader = ck.open_kind(kind)
    want = [ck.digest(b) for b in loader]
    main = threading.main_thread().ident
    started = threading.Event()

    def interrupt():
        started.wait(WATCHDOG_S)
        signal.pthread_kill(main, signal.SIGINT)

    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    epochs = 0
    try:
        with pytest.raises(KeyboardInterrupt):
            while epochs < 100_000:  # ends by the interrupt; the bound only stops a broken loop
                for _ in loader:
                    started.set()
                epochs += 1
        thread.join(WATCHDOG_S)
        assert not thread.is_alive()
        # usable after the interrupt: a new epoch yields whole, correct batches
        assert len([ck.digest(b) for b in loader]) == len(want)
    finally:
        loader.close()


@pytest.mark.parametrize("kind", KINDS)
def test_close_from_another_thread_gives_a_clear_error(kind):
    loader = ck.open_kind(kind)
    it = iter(loader)
    next(it)
    closer = threading.Thread(target=loader.close)
    closer.start()
    closer.join(WATCHDOG_S)
    assert not closer.is_alive(), "close() from another thread did not return"
    with pytest.raises(Exception, match="closed") as err:
        for _ in it:
            pass
    assert not isinstance(err.value, (StopIteration, KeyboardInterrupt))
