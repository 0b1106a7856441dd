"""Lifetime helpers shared by the wrapper classes."""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


class Closeable:
    """Mixin for objects that own engine resources: ``with`` and garbage
    collection both call :meth:`close`, which subclasses make idempotent."""

    def close(self) -> None:  # pragma: no cover - always overridden
        raise NotImplementedError

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
