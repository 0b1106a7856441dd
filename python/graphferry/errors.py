"""Exceptions raised by graphferry.

Every status other than ``GF_OK`` that the C library returns becomes one of
these, carrying the status in ``.code`` and the library's own message (which
starts with the C function's name and names the offending argument).
"""

from __future__ import annotations

__all__ = [
    "GraphferryError",
    "InvalidArgumentError",
    "TypeMismatchError",
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
GF_DONE = 100

STATUS_NAMES = {
    GF_OK: "GF_OK",
    GF_EINVAL: "GF_EINVAL",
    GF_ETYPE: "GF_ETYPE",
    GF_ENOMEM: "GF_ENOMEM",
    GF_EBADHANDLE: "GF_EBADHANDLE",
    GF_ESTATE: "GF_ESTATE",
    GF_EIO: "GF_EIO",
    GF_ENOTSUP: "GF_ENOTSUP",
    GF_EFORK: "GF_EFORK",
    GF_EINTERNAL: "GF_EINTERNAL",
    GF_DONE: "GF_DONE",
}


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


def error_for_status(code: int, message: str) -> GraphferryError:
    """Returns the exception for a non-``GF_OK`` status (does not raise it)."""
    if code == GF_EINVAL:
        return InvalidArgumentError(code, message)
    if code == GF_ETYPE:
        return TypeMismatchError(code, message)
    return GraphferryError(code, message)
