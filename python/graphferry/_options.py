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

from . import _lib
from ._dlpack import borrow
from .graph import _as_int

__all__ = ["SampleOptions"]

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_FRONTIERS = {"all": _lib.GF_FRONTIER_ALL, "new": _lib.GF_FRONTIER_NEW}
_SCHEMES = {"node": _lib.GF_SCHEME_NODE_WISE, "layer": _lib.GF_SCHEME_LAYER_WISE}


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


def check_scheme(scheme: Any) -> str:
    if not isinstance(scheme, str) or scheme not in _SCHEMES:
        raise ValueError(f"'scheme' must be 'node' or 'layer' (got {scheme!r})")
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
        scheme (str): ``"node"`` (node-wise) or ``"layer"`` (layer-wise).
        biased (bool): sample in proportion to the graph's edge weights.
        layer_without_replacement (bool): with ``scheme="layer"``, draw
            distinct frontier nodes.
        exclude_edges (Tensor, optional): edge ids never sampled.
        seed (int): seed of the random streams.
        num_threads (int): worker threads; ``<= 0`` uses every core.
    """

    fanouts: tuple[int, ...]
    replace: bool = False
    frontier: str = "all"
    scheme: str = "node"
    biased: bool = False
    layer_without_replacement: bool = False
    # A tensor has no value equality: options compare without it.
    exclude_edges: Any = field(default=None, compare=False)
    seed: int = 0
    num_threads: int = 0

    def __post_init__(self) -> None:
        # Normalised in place once; the instance is frozen afterwards.
        set_ = object.__setattr__
        set_(self, "fanouts", fanout_values(self.fanouts))
        set_(self, "replace", bool(self.replace))
        set_(self, "frontier", _check_frontier(self.frontier))
        set_(self, "scheme", check_scheme(self.scheme))
        set_(self, "biased", bool(self.biased))
        set_(self, "layer_without_replacement", bool(self.layer_without_replacement))
        set_(self, "seed", _as_int(self.seed, "seed"))
        set_(self, "num_threads", _as_int(self.num_threads, "num_threads"))

    def replace_fields(self, **changes: Any) -> SampleOptions:
        """A copy with ``changes`` applied (and validated)."""
        return dataclasses.replace(self, **changes)

    def to_c(self) -> tuple[_lib.gf_sample_options, Any]:
        """The C struct, and what must stay alive as long as it is used (the
        fan-out array and the borrowed ``exclude_edges``)."""
        array = (ctypes.c_int32 * max(len(self.fanouts), 1))(*self.fanouts)
        excluded = borrow(self.exclude_edges, "exclude_edges")
        opts = _lib.gf_sample_options(
            num_hops=len(self.fanouts),
            fanouts=ctypes.cast(array, ctypes.POINTER(ctypes.c_int32)),
            replace=int(self.replace),
            frontier=_FRONTIERS[self.frontier],
            seed=self.seed & 0xFFFFFFFFFFFFFFFF,
            num_threads=self.num_threads,
            scheme=_SCHEMES[self.scheme],
            biased=int(self.biased),
            layer_without_replacement=int(self.layer_without_replacement),
            exclude_edges=ctypes.pointer(excluded.dltensor) if excluded is not None else None,
        )
        return opts, (array, excluded)
