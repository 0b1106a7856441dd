"""Exceptions raised by graphferry.

Every status other than ``GF_OK`` that the C library returns becomes one of
these, carrying the status in ``.code`` and the library's own message (which
starts with the C function's name and names the offending argument). Each is
also the built-in exception that Python code expects for its kind of failure:
``GF_EINVAL`` a :class:`ValueError`, ``GF_ETYPE`` a :class:`TypeError`,
``GF_EIO`` an :class:`OSError`, ``GF_ENOMEM`` a :class:`MemoryError`.
"""

from __future__ import annotations

__all__ = [
    "GraphferryError",
    "InvalidArgumentError",
    "TypeMismatchError",
    "StorageError",
    "OutOfMemoryError",
    "error_for_status",
]

# The status codes of include/graphferry.h.
GF_OK = 0
GF_EINVAL = 1
GF_ETYPE = 2
GF_ENOMEM = 3
GF_EBADHANDLE = 4
GF_ESTATE = 5
GF_EIO = 6
GF_ENOTSUP = 7
GF_EFORK = 8
GF_EINTERNAL = 9
GF_ECANCELED = 10
GF_DONE = 100
GF_NOT_READY = 101

#: Each code's macro name (the constants above: one source).
STATUS_NAMES = {code: name for name, code in list(globals().items()) if name.startswith("GF_")}


class GraphferryError(RuntimeError):
    """A graphferry call failed.

    Attributes:
        code (int): the C status code (``GF_E*`` of include/graphferry.h).
        message (str): the library's message, e.g.
            ``"gf_sample: seeds[3] = 99 is out of range [0, 10)"``.
    """

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = int(code)
        self.message = message

    @property
    def status_name(self) -> str:
        """The code's macro name, e.g. ``"GF_EBADHANDLE"``."""
        return STATUS_NAMES.get(self.code, f"status {self.code}")

    def __reduce__(self):
        return (type(self), (self.code, self.message))


class InvalidArgumentError(GraphferryError, ValueError):
    """An argument has an invalid value (``GF_EINVAL``)."""


class TypeMismatchError(GraphferryError, TypeError):
    """A tensor has the wrong dtype, device or layout (``GF_ETYPE``)."""


class StorageError(GraphferryError, OSError):
    """A file could not be read or written, or is damaged (``GF_EIO``).

    An :class:`OSError` too, so ``except OSError`` catches it. ``str(err)``
    is the library's message, which names the file; ``errno`` and
    ``filename`` are None (the message may come from several system calls).
    """


class OutOfMemoryError(GraphferryError, MemoryError):
    """An allocation failed or would exceed the machine (``GF_ENOMEM``).

    A :class:`MemoryError` too; the library and every handle stay usable.
    """


_CLASSES: dict[int, type[GraphferryError]] = {
    GF_EINVAL: InvalidArgumentError,
    GF_ETYPE: TypeMismatchError,
    GF_EIO: StorageError,
    GF_ENOMEM: OutOfMemoryError,
}


def error_for_status(code: int, message: str) -> GraphferryError:
    """Returns the exception for a non-``GF_OK`` status (does not raise it)."""
    return _CLASSES.get(code, GraphferryError)(code, message)
