"""The sampling options, validated once and converted to ``gf_sample_options``
in one place.

:func:`~graphferry.sample_neighbors`, :class:`~graphferry.Loader`, the DGL and
PyG samplers and loaders all take the same options as keywords; each builds
one :class:`SampleOptions` from them, so a value is checked (its Python type;
the engine checks the values) and translated to the C struct only here.
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ._native import lib as _lib
from ._native.dlpack import borrow
from .graph import _as_int

__all__ = ["SampleOptions"]

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_FRONTIERS = {"all": _lib.GF_FRONTIER_ALL, "new": _lib.GF_FRONTIER_NEW}
_TEMPORAL = {None: _lib.GF_TEMPORAL_NONE, "node": _lib.GF_TEMPORAL_NODE, "edge": _lib.GF_TEMPORAL_EDGE}
_TEMPORAL_STRATEGIES = {"uniform": _lib.GF_TEMPORAL_UNIFORM, "last": _lib.GF_TEMPORAL_LAST}
_SCHEMES = {
    "node": _lib.GF_SCHEME_NODE_WISE,
    "layer": _lib.GF_SCHEME_LAYER_WISE,
    "labor": _lib.GF_SCHEME_LABOR,
}


def fanout_values(fanouts: Any, name: str = "fanouts") -> tuple[int, ...]:
    """The fan-outs as a tuple of ints. Values are the engine's to check; only
    what an int32 cannot carry is refused here."""
    if isinstance(fanouts, torch.Tensor):
        fanouts = fanouts.tolist()
    if isinstance(fanouts, (str, bytes)) or not isinstance(fanouts, (Sequence, np.ndarray)):
        raise TypeError(f"'{name}' must be a list of ints (got '{type(fanouts).__name__}')")
    values = tuple(_as_int(v, f"{name}[{i}]") for i, v in enumerate(fanouts))
    for i, v in enumerate(values):
        if not _INT32_MIN <= v <= _INT32_MAX:
            raise ValueError(f"'{name}[{i}]' = {v} does not fit in an int32")
    return values


def relation_fanout_values(value: Any) -> tuple[tuple[int, ...], ...] | None:
    """Per-hop, per-relation fan-outs as a tuple of int tuples (None stays
    None). Every hop must list the same number of relations."""
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"'relation_fanouts' must be a list (per hop) of lists of ints (got '{type(value).__name__}')")
    rows = tuple(fanout_values(row, f"relation_fanouts[{h}]") for h, row in enumerate(value))
    if not rows:
        raise ValueError("'relation_fanouts' is empty (want one list of per-relation fan-outs per hop)")
    for h, row in enumerate(rows):
        if len(row) != len(rows[0]) or not row:
            raise ValueError(
                f"'relation_fanouts[{h}]' has {len(row)} entries, 'relation_fanouts[0]' {len(rows[0])} "
                "(want one fan-out per relation, the same relations every hop)"
            )
    return rows


def _check_choice(value: Any, name: str, choices: dict) -> Any:
    if value not in choices or isinstance(value, bool):
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"'{name}' must be one of {allowed} (got {value!r})")
    return value


def check_scheme(scheme: Any) -> str:
    if not isinstance(scheme, str) or scheme not in _SCHEMES:
        *names, last = map(repr, _SCHEMES)
        raise ValueError(f"'scheme' must be {', '.join(names)} or {last} (got {scheme!r})")
    return scheme


def _check_frontier(frontier: Any) -> str:
    if not isinstance(frontier, str) or frontier not in _FRONTIERS:
        raise ValueError(f"'frontier' must be 'all' or 'new' (got {frontier!r})")
    return frontier


@dataclass(frozen=True)
class SampleOptions:
    r"""How one multi-hop neighbourhood is sampled (``gf_sample_options``).

    Attributes:
        fanouts (tuple of int): fan-out per hop FROM THE SEEDS; ``-1`` takes
            all neighbours and ``0`` none (the hop's block keeps its
            destination nodes and has no edge, as DGL's fan-out 0); values
            below ``-1`` are refused by the library, naming the hop.
        replace (bool): sample with replacement.
        frontier (str): ``"all"`` (DGL's message-flow blocks) or ``"new"``
            (PyG's: each hop expands the nodes first reached in the previous).
        scheme (str): ``"node"`` (node-wise: every frontier node samples up
            to ``fanouts[h]`` of its neighbours), ``"layer"`` (layer-wise, as
            in DSP: hop ``h`` draws ``fanouts[h]`` times a frontier node with
            probability proportional to its in-edge weight, or in-degree when
            not biased, and each drawn node samples as many neighbours as it
            was drawn) or ``"labor"`` (LABOR-0, DGL's ``LaborSampler``: every
            neighbour draws one variate per batch and hop, shared by all
            destinations, and destination ``v`` keeps it with probability
            ``min(1, fanout / in_degree(v))``; not with ``replace`` or
            ``biased``).
        biased (bool): take neighbour ``u`` of ``v`` with probability
            proportional to the weight of edge ``u -> v``
            (:meth:`Graph.set_edge_weights`); an edge of weight 0 never.
        layer_without_replacement (bool): with ``scheme="layer"``, draw
            ``min(fanouts[h], frontier size)`` distinct frontier nodes, each
            sampling one neighbour.
        layer_dependency (bool): with ``scheme="labor"``, every hop uses
            the same variates (DGL's ``layer_dependency=True``).
        exclude_edges (Tensor, optional): edge ids never sampled, as if
            absent (e.g. link prediction's targets); unknown ids are ignored.
        seed (int): seed of the random streams.
        num_threads (int): worker threads; ``<= 0`` uses every core.
        relation_fanouts (tuple of tuple of int, optional): on a typed graph
            (:meth:`Graph.set_types`), the fan-out per hop and per relation
            index: a frontier node samples ``relation_fanouts[h][r]`` of its
            in-edges of every relation ``r`` into its type (``-1`` all, ``0``
            none). ``fanouts`` is then ignored (pass ``()`` or the hops'
            maxima). Not with ``scheme="layer"``.
        disjoint (bool): every seed is its own subgraph (PyG's
            ``disjoint=True``; seeds may repeat); needs ``frontier="new"``.
            The result's ``batch`` gives each node's seed position.
        temporal (str, optional): ``"node"`` or ``"edge"``: only neighbours
            (edges) whose time (:meth:`Graph.set_node_time` /
            :meth:`Graph.set_edge_time`) is ``<=`` the subgraph's seed time
            are sampled; needs ``disjoint`` and ``seed_times``.
        temporal_strategy (str): ``"uniform"`` or ``"last"`` (the fan-out
            candidates with the largest times; ties: the later in-edge).
        seed_times (Tensor, optional): int64 ``[B]``, one time per seed, for
            :func:`~graphferry.sample_neighbors` (loaders take
            ``seed_times=`` themselves).
        batch_key (int): for :func:`~graphferry.sample_neighbors`: the key
            of the sample's random streams, which the engine derives from
            ``(seed, batch_key)`` (``gf_sample_keyed``: a loader's batch ``i``
            of epoch ``e`` uses ``(e << 32) | i``); loaders ignore it.
    """

    fanouts: tuple[int, ...]
    replace: bool = False
    frontier: str = "all"
    scheme: str = "node"
    biased: bool = False
    layer_without_replacement: bool = False
    layer_dependency: bool = False
    # A tensor has no value equality: options compare without it.
    exclude_edges: Any = field(default=None, compare=False)
    seed: int = 0
    num_threads: int = 0
    relation_fanouts: Any = None
    disjoint: bool = False
    temporal: Any = None
    temporal_strategy: str = "uniform"
    seed_times: Any = field(default=None, compare=False)
    batch_key: int = 0

    def __post_init__(self) -> None:
        # Normalised in place once; the instance is frozen afterwards.
        set_ = object.__setattr__
        set_(self, "fanouts", fanout_values(self.fanouts))
        set_(self, "replace", bool(self.replace))
        set_(self, "frontier", _check_frontier(self.frontier))
        set_(self, "scheme", check_scheme(self.scheme))
        set_(self, "biased", bool(self.biased))
        set_(self, "layer_without_replacement", bool(self.layer_without_replacement))
        set_(self, "layer_dependency", bool(self.layer_dependency))
        set_(self, "seed", _as_int(self.seed, "seed"))
        set_(self, "num_threads", _as_int(self.num_threads, "num_threads"))
        set_(self, "batch_key", _as_int(self.batch_key, "batch_key"))
        set_(self, "relation_fanouts", relation_fanout_values(self.relation_fanouts))
        if self.relation_fanouts is not None:
            if not self.fanouts:
                # The hop count is what fanouts still says.
                set_(self, "fanouts", tuple(max(row) for row in self.relation_fanouts))
            elif len(self.fanouts) != len(self.relation_fanouts):
                raise ValueError(
                    f"'fanouts' has {len(self.fanouts)} hops but 'relation_fanouts' {len(self.relation_fanouts)} "
                    "(pass fanouts=() with relation_fanouts)"
                )
        set_(self, "disjoint", bool(self.disjoint))
        set_(self, "temporal", _check_choice(self.temporal, "temporal", _TEMPORAL))
        set_(
            self, "temporal_strategy", _check_choice(self.temporal_strategy, "temporal_strategy", _TEMPORAL_STRATEGIES)
        )

    def fingerprint(self) -> str:
        """The options that decide a loader's batches, as a string (a loader
        state's check): every field but the thread count, the one-off batch
        key and the tensors (the seed times and excluded edges, which the
        state checks apart)."""
        keep = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in ("num_threads", "batch_key", "exclude_edges", "seed_times")
        }
        return repr(sorted(keep.items()))

    def replace_fields(self, **changes: Any) -> SampleOptions:
        """A copy with ``changes`` applied (and validated)."""
        return dataclasses.replace(self, **changes)

    def to_c(self) -> tuple[_lib.gf_sample_options, Any]:
        """The C struct, and what must stay alive as long as it is used (the
        fan-out arrays and the borrowed tensors)."""
        array = (ctypes.c_int32 * max(len(self.fanouts), 1))(*self.fanouts)
        excluded = borrow(self.exclude_edges, "exclude_edges")
        times = borrow(self.seed_times, "seed_times")
        rel = None
        num_hops = len(self.fanouts)
        if self.relation_fanouts is not None:
            flat = [f for row in self.relation_fanouts for f in row]
            rel = (ctypes.c_int32 * len(flat))(*flat)
            num_hops = len(self.relation_fanouts)
        opts = _lib.gf_sample_options(
            num_hops=num_hops,
            fanouts=ctypes.cast(array, ctypes.POINTER(ctypes.c_int32)),
            replace=int(self.replace),
            frontier=_FRONTIERS[self.frontier],
            seed=self.seed & 0xFFFFFFFFFFFFFFFF,
            num_threads=self.num_threads,
            scheme=_SCHEMES[self.scheme],
            biased=int(self.biased),
            layer_without_replacement=int(self.layer_without_replacement),
            exclude_edges=ctypes.pointer(excluded.dltensor) if excluded is not None else None,
            layer_dependency=int(self.layer_dependency),
            num_relations=len(self.relation_fanouts[0]) if self.relation_fanouts is not None else 0,
            relation_fanouts=ctypes.cast(rel, ctypes.POINTER(ctypes.c_int32)) if rel is not None else None,
            disjoint=int(self.disjoint),
            temporal=_TEMPORAL[self.temporal],
            temporal_strategy=_TEMPORAL_STRATEGIES[self.temporal_strategy],
            seed_times=ctypes.pointer(times.dltensor) if times is not None else None,
        )
        return opts, (array, excluded, rel, times)
