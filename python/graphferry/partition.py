"""Offline partitioning: ``python -m graphferry partition SRC DST``.

Splits a graphferry dataset directory into one folder per rank,
``DST/part-<r>/``, plus ``DST/partition.json`` and ``DST/assignment.npy``.
The engine does the writing (``gf_dataset_partition``); range and random
assignments are the engine's, METIS's is computed here with ``pymetis`` on
the symmetrised graph (METIS partitions undirected graphs) and handed over.

Every ``part-<r>`` is a graphferry dataset (:meth:`graphferry.Graph.open`
reads it) over the rank's local nodes: its owned nodes first (local ids
``[0, num_owned)``, increasing original id), then the other nodes it holds.
Beside it: ``global_ids.npy`` (local node -> original node) and
``global_eids.npy`` (local edge id -> original edge id). Labels are copied
for every local node; the train/val/test masks are set on owned nodes only,
so each seed lives on exactly one rank, its owner. By layout:

* ``dsp`` (DSP): owned nodes with all their in-edges; the sources of those
  edges owned elsewhere follow as halo nodes without in-edges. Features of
  owned nodes only, in ``feat.npy`` (``[num_owned, ...]``; no ``feat.bin``).
* ``self-reliant`` (PaGraph): owned nodes and the ``--hops``-hop
  in-neighbourhood of the owned seeds (train, val and test nodes) with every
  in-edge of every node closer than ``--hops`` to a seed; features of every
  local node in the dataset's ``feat.bin``: sampling needs no exchange.
* ``hybrid`` (FastSample): every node and edge on every rank; features of
  owned nodes only, in ``feat.npy``.

A typed (heterogeneous) dataset is partitioned the same way: node and edge
ids stay its global ones (type after type, relation after relation), so a
node's type and an edge's relation follow from ``global_ids.npy`` and
``global_eids.npy``; ``partition.json`` records ``node_types`` and
``edge_types``, each folder stays an untyped dataset, and the per-type node
data (``"paper/feat"``, ...) is written per rank as ``node-data-<i>.npy``
(listed under the rank's ``node_data``): the rows of its owned nodes of that
type (self-reliant: of every node of that type it holds), in local order.

``partition.json`` records method, parts, layout, hops, seed, per-rank counts
(nodes, owned, edges, train/val/test seeds, feature rows and file), the size
and CRC-32C of every file, and the edge cut of this method and, for
comparison, of range and random.
"""

from __future__ import annotations

import contextlib
import ctypes
import os

import numpy as np
import torch

from . import _interrupt
from ._metafile import read_object
from ._native import lib as _lib
from ._native.dlpack import borrow
from ._native.lib import gf_dataset_partition, gf_partition_options
from .graph import Graph, _as_int

__all__ = ["METHODS", "LAYOUTS", "metis_assignment", "metis_parts", "partition", "summary", "symmetric_adjacency"]

METHODS = ("metis", "random", "range", "ldg")
LAYOUTS = {"dsp": _lib.GF_LAYOUT_DSP, "self-reliant": _lib.GF_LAYOUT_SELF_RELIANT, "hybrid": _lib.GF_LAYOUT_HYBRID}
_ENGINE_METHODS = {"range": _lib.GF_PARTITION_RANGE, "random": _lib.GF_PARTITION_RANDOM, "ldg": _lib.GF_PARTITION_LDG}
_GIVEN = _lib.GF_PARTITION_GIVEN


def _bar(total: int, desc: str, quiet: bool):
    """A tqdm progress bar of one stage (None without tqdm)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return contextlib.nullcontext()
    return tqdm(total=total, desc=desc, unit="step", disable=quiet, leave=False)


def symmetric_adjacency(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The graph of edges ``src[i] -> dst[i]`` over ``n`` nodes as METIS wants
    it: undirected (each edge in both directions), without self-loops or
    repeated edges, as CSR ``(xadj, adjncy)`` int64 arrays."""
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    # Both directions, each pair once (np.unique sorts by row, then column).
    keys = np.unique(np.concatenate([src * n + dst, dst * n + src]))
    rows, cols = np.divmod(keys, max(n, 1))
    xadj = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=xadj[1:])
    return xadj, cols.astype(np.int64)


def metis_parts(
    xadj: np.ndarray,
    adjncy: np.ndarray,
    n: int,
    parts: int,
    *,
    seed: int = 0,
    recursive: bool | None = None,
    who: str = "--method metis",
) -> np.ndarray:
    """The part of every node of the undirected CSR graph ``(xadj, adjncy)``
    (:func:`symmetric_adjacency`) from METIS, through ``pymetis``: k-way with
    ``recursive=False``, recursive bisection with ``True``, pymetis's choice
    with None (bisection up to 8 parts): int64 ``[n]`` in ``[0, parts)``.
    ``who`` names the caller in errors."""
    try:
        import pymetis
    except ImportError as err:
        raise ImportError(
            f"{who} needs pymetis: pip install pymetis (graphferry[pyg] and graphferry[partition] bring it)"
        ) from err
    if parts == 1 or n == 0:
        return np.zeros(n, dtype=np.int64)
    if parts > n:
        # METIS fails there with "Caught an unknown exception!".
        also = "; range and random write empty ranks" if who == "--method metis" else ""
        raise ValueError(f"{who} cannot split {n} nodes into {parts} parts (at most one part a node{also})")
    opts = pymetis.Options(seed=seed) if seed else None
    try:
        _, membership = pymetis.part_graph(parts, pymetis.CSRAdjacency(xadj, adjncy), options=opts, recursive=recursive)
    except RuntimeError as err:
        raise ValueError(f"METIS (pymetis) failed to split {n} nodes into {parts} parts: {err}") from None
    return np.asarray(membership, dtype=np.int64)


def metis_assignment(src_dir: str | os.PathLike, parts: int, *, seed: int = 0, quiet: bool = True) -> np.ndarray:
    """The rank of every node from METIS (through ``pymetis``) on the
    symmetrised graph, read by the engine: int64 ``[num_nodes]`` in ``[0, parts)``."""
    with _bar(1, "metis", quiet) as bar, Graph.open(src_dir) as g:
        src, dst, _ = g.edges("coo")
        assign = metis_parts(*symmetric_adjacency(src.numpy(), dst.numpy(), g.num_nodes), g.num_nodes, parts, seed=seed)
        bar and bar.update(1)
    return assign


def partition(
    src_dir: str | os.PathLike,
    dst_dir: str | os.PathLike,
    *,
    parts: int,
    method: str = "metis",
    layout: str = "dsp",
    hops: int = 2,
    seed: int = 0,
    quiet: bool = True,
    overwrite: bool = False,
    resume: bool = False,
    memory_limit: int = 0,
) -> dict:
    """Writes ``src_dir`` partitioned into ``parts`` rank folders under
    ``dst_dir`` (see the module's doc for what each holds) and returns the
    content of ``partition.json``. ``dst_dir`` must be empty or new, and not
    ``src_dir``, inside or above it, unless ``overwrite`` (what a partition
    writes there is replaced, nothing else).

    Args:
        method: ``"metis"`` (pymetis), ``"random"``, ``"range"`` or
            ``"ldg"`` (streaming: one pass, for graphs larger than memory).
        layout: ``"dsp"``, ``"self-reliant"`` or ``"hybrid"``.
        hops: L of the self-reliant layout.
        seed: seed of random (and of METIS's own randomisation).
        quiet: no progress bars.
        overwrite: write into a used folder, replacing what a partition wrote.
        resume: go on with the partition an interrupted run left in
            ``dst_dir`` (its finished rank folders are kept).
        memory_limit: the bytes the call may use (0: no bound).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)} (got {method!r})")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)} (got {layout!r})")
    if isinstance(parts, bool) or not isinstance(parts, int) or not 1 <= parts <= _lib.GF_MAX_PARTS:
        # Checked here too: ctypes would wrap a count past int32 silently.
        raise ValueError(f"parts must be an integer from 1 to {_lib.GF_MAX_PARTS} (got {parts!r})")
    if isinstance(hops, bool) or not isinstance(hops, int) or hops < 0:
        raise ValueError(f"hops must be an integer >= 0 (got {hops!r})")
    assignment = None
    if method == "metis":
        assignment = borrow(torch.from_numpy(metis_assignment(src_dir, parts, seed=seed, quiet=quiet)), "assignment")
    with _bar(parts, f"write {layout}", quiet) as bar:
        progress = _lib.gf_progress_fn(lambda _user, done, _total: bar and bar.update(done - bar.n))
        opts = gf_partition_options(
            method=_ENGINE_METHODS.get(method, _GIVEN),
            num_parts=parts,
            layout=LAYOUTS[layout],
            num_hops=hops,
            seed=seed,
            assignment=None if assignment is None else ctypes.pointer(assignment.dltensor),
            method_name=method.encode(),
            progress=progress,
            overwrite=bool(overwrite),
            resume=bool(resume),
            memory_limit_bytes=_as_int(memory_limit, "memory_limit"),
        )
        # Ctrl-C stops it after the rank folder being written; the call
        # then removes what it wrote (waited for: give_up_s=None).
        src, dst = os.fsencode(src_dir), os.fsencode(dst_dir)
        _interrupt.call(lambda: gf_dataset_partition(src, dst, ctypes.byref(opts)), give_up_s=None)
    return read_object(os.path.join(dst_dir, "partition.json"))


def summary(meta: dict) -> str:
    """A few lines for the command line: the cut of each method and each
    rank's counts."""
    e = max(meta["num_edges"], 1)
    cuts = ", ".join(f"{m} {c} ({100 * c / e:.1f}%)" for m, c in sorted(meta["edge_cuts"].items()))
    lines = [
        f"{meta['parts']} parts, method {meta['method']}, layout {meta['layout']}: "
        f"edge cut {meta['edge_cut']} of {meta['num_edges']} edges; by method: {cuts}"
    ]
    for r in meta["ranks"]:
        lines.append(
            f"  {r['dir']}: {r['num_nodes']} nodes ({r['num_owned']} owned), {r['num_edges']} edges, "
            f"seeds {r['num_train']}/{r['num_val']}/{r['num_test']}, "
            f"features {r['feature_rows']} rows in {r['feature_file'] or '-'}"
        )
    return "\n".join(lines)
