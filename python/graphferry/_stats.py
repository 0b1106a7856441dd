"""Loader statistics: what ``gf_loader_stats`` returns, as
frozen dataclasses (:class:`LoaderStats`), with the derived numbers a
progress bar shows (batches per second, the bottleneck stage, the hit rate).
"""

from __future__ import annotations

import ctypes
import dataclasses
from dataclasses import dataclass
from typing import Any

from ._native import lib as _lib

__all__ = ["StageStats", "LoaderCounters", "LoaderStats", "read_stats", "set_cache"]


@dataclass(frozen=True)
class StageStats:
    """One pipeline stage's time (seconds, summed over its threads) and
    batches: ``busy`` working, ``blocked`` waiting for the next stage to take
    a batch (a full queue), ``waiting`` for a batch from the stage before
    (for the consumer: the time spent waiting for the loader). The loader's
    ``busy`` is the time during which at least one of its gathers runs: on
    the disk tier it gathers the next batch while the current one finishes,
    and that overlap is counted once."""

    busy: float
    blocked: float
    waiting: float
    batches: int

    @classmethod
    def _of(cls, c: _lib.gf_stage_stats) -> StageStats:
        return cls(c.busy_ns / 1e9, c.blocked_ns / 1e9, c.waiting_ns / 1e9, int(c.batches))


@dataclass(frozen=True)
class LoaderCounters:
    """A loader's statistics over one span (an epoch, or all of them)."""

    sampler: StageStats
    loader: StageStats
    consumer: StageStats
    bytes_host: int
    bytes_pinned: int
    bytes_device: int
    rows_hot: int
    rows_cold: int
    wall: float  # seconds
    workers: int  # sampler workers, to compare the stages' loads
    # The disk tier's split of rows_cold: rows served by its CPU cache
    # (counted in bytes_host) and read from disk; the bytes of the rows read
    # from disk, the bytes the reads fetched (aligned blocks, neighbours
    # coalesced) and the number of reads.
    rows_cache: int = 0
    rows_disk: int = 0
    bytes_disk: int = 0
    bytes_disk_read: int = 0
    disk_requests: int = 0

    @classmethod
    def _of(cls, c: _lib.gf_loader_counters, workers: int, t: _lib.gf_tier_counters) -> LoaderCounters:
        stages = (StageStats._of(c.sampler), StageStats._of(c.loader), StageStats._of(c.consumer))
        host = (int(c.bytes_host), int(c.bytes_pinned), int(c.bytes_device), int(c.rows_hot), int(c.rows_cold))
        disk = (int(t.rows_cache), int(t.rows_disk), int(t.bytes_disk), int(t.bytes_disk_read), int(t.disk_requests))
        return cls(*stages, *host, c.wall_ns / 1e9, workers, *disk)

    @property
    def hit_rate(self) -> float:
        """Rows served by a hot tier over all rows gathered (0 without any)."""
        n = self.rows_hot + self.rows_cold
        return self.rows_hot / n if n else 0.0

    @property
    def cache_hit_rate(self) -> float:
        """Rows the disk tier's CPU cache served over the rows the disk tier
        served (cache and disk; 0 without a disk tier)."""
        n = self.rows_cache + self.rows_disk
        return self.rows_cache / n if n else 0.0

    @property
    def batches_per_second(self) -> float:
        """Batches the consumer received per second of wall time."""
        return self.consumer.batches / self.wall if self.wall > 0 else 0.0

    @property
    def load(self) -> dict[str, float]:
        """Each stage's busy share of the wall time, the sampler's per
        worker: the stage closest to 1 limits the others."""
        if self.wall <= 0:
            return {"sampler": 0.0, "loader": 0.0, "consumer": 0.0}
        return {
            "sampler": self.sampler.busy / (max(1, self.workers) * self.wall),
            "loader": self.loader.busy / self.wall,
            "consumer": self.consumer.busy / self.wall,
        }

    @property
    def bottleneck(self) -> str:
        """``"sampler"``, ``"loader"`` or ``"consumer"`` (the training
        step): the stage with the highest :attr:`load`."""
        load = self.load
        return max(load, key=load.__getitem__)


@dataclass(frozen=True)
class LoaderStats:
    """What :meth:`graphferry.Loader.stats` returns: ``current`` is the epoch
    in progress (or the last one), ``total`` every epoch since the loader
    was opened."""

    workers: int
    epoch: int
    epochs: int
    current: LoaderCounters
    total: LoaderCounters

    def to_dict(self) -> dict[str, Any]:
        """The statistics as nested dicts (for logging as JSON)."""
        return dataclasses.asdict(self)


def read_stats(handle: int) -> LoaderStats:
    """Calls ``gf_loader_stats`` on a ``gf_loader *``."""
    out = _lib.gf_loader_statistics()
    _lib.gf_loader_stats(handle, ctypes.byref(out))
    w = int(out.workers)
    return LoaderStats(
        w,
        int(out.epoch),
        int(out.epochs),
        LoaderCounters._of(out.current, w, out.current_tiers),
        LoaderCounters._of(out.total, w, out.total_tiers),
    )


_POLICIES = {"degree": _lib.GF_CACHE_IN_DEGREE, "presample": _lib.GF_CACHE_PRESAMPLING}


def cache_options(
    size: int | float | str, policy: str, budget: int | None, reserve: int, presample_epochs: int
) -> _lib.gf_cache_options:
    """Checks :meth:`graphferry.Loader.set_cache`'s arguments into a ``gf_cache_options``."""
    if policy not in _POLICIES:
        raise ValueError(f"policy must be one of {sorted(_POLICIES)} (got {policy!r})")
    opts = _lib.gf_cache_options(policy=_POLICIES[policy], reserve=int(reserve), presample_epochs=int(presample_epochs))
    if isinstance(size, str):
        if size != "auto":
            raise ValueError(f"size must be a byte count, a fraction or 'auto' (got {size!r})")
        if budget is None:
            raise ValueError("size='auto' needs a budget in bytes on the CPU build (what the hot tier may use)")
        opts.auto_size, opts.budget = 1, int(budget)
    elif isinstance(size, bool):
        raise TypeError("size must be an int (bytes), a float (fraction) or 'auto' (got bool)")
    elif isinstance(size, int):
        opts.bytes = size
    elif isinstance(size, float):
        opts.fraction = size
    else:
        raise TypeError(f"size must be an int (bytes), a float (fraction) or 'auto' (got '{type(size).__name__}')")
    return opts


def set_cache(handle: int, options: _lib.gf_cache_options) -> int:
    """Calls ``gf_loader_set_cache``; returns the number of hot rows."""
    rows = ctypes.c_int64()
    _lib.gf_loader_set_cache(handle, ctypes.byref(options), ctypes.byref(rows))
    return int(rows.value)
