"""Reading a dataset's JSON metadata (``graphferry.json``, ``partition.json``)
from Python as carefully as the engine reads it.

The engine opens these files itself; the Python tools (``verify``,
``partition``, :meth:`graphferry.HeteroGraph.open`) read them too, and a
plain ``open()`` + ``json.load`` hangs on a named pipe, reads ``/dev/zero``
until memory runs out and raises ``RecursionError`` on deeply nested
brackets. :func:`read_json` refuses all three with an error naming the file.
"""

from __future__ import annotations

import json
import os
import stat
import threading
import warnings
from typing import Any

from .errors import GF_EINVAL, GF_EIO, InvalidArgumentError, StorageError

# The engine's cap (engine/internal/fileio.MaxMetaBytes): metadata holds
# counts and provenance, never data.
MAX_META_BYTES = 64 << 20


def read_json(path: str | os.PathLike) -> Any:
    """The JSON value in the regular file ``path``.

    Raises:
        FileNotFoundError: there is no such file.
        StorageError: (an OSError) not a regular file (a pipe, a device, a
            directory), larger than MAX_META_BYTES, or unreadable.
        InvalidArgumentError: (a ValueError) not JSON, or nested too deeply
            for Python's parser.
    """
    path = os.fspath(path)
    # O_NONBLOCK: opening a named pipe returns at once instead of waiting for
    # a writer (it means nothing to regular files).
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise StorageError(GF_EIO, f"{path} is not a regular file ({_kind(st.st_mode)})")
        if st.st_size > MAX_META_BYTES:
            raise StorageError(
                GF_EIO, f"{path} is {st.st_size} bytes, more than the {MAX_META_BYTES} a metadata file may have"
            )
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(MAX_META_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_META_BYTES:  # grew since fstat
        raise StorageError(GF_EIO, f"{path} is more than the {MAX_META_BYTES} bytes a metadata file may have")
    try:
        return json.loads(raw)
    except RecursionError:
        raise InvalidArgumentError(GF_EINVAL, f"{path}: the JSON is nested too deeply to read") from None
    except ValueError as err:  # JSONDecodeError, UnicodeDecodeError
        raise InvalidArgumentError(GF_EINVAL, f"{path}: not valid JSON ({err})") from None


def read_object(path: str | os.PathLike) -> dict:
    """:func:`read_json` of a file that must hold a JSON object."""
    value = read_json(path)
    if not isinstance(value, dict):
        what = type(value).__name__
        raise InvalidArgumentError(GF_EINVAL, f"{os.fspath(path)}: a JSON object was expected (got {what})")
    return value


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return f"mode {stat.filemode(mode)}"


_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_if_unverified(path: str | os.PathLike) -> None:
    """Warns, once per dataset directory and process, when the dataset at
    ``path`` maps data files whose blocks graphferry.json records no sums
    of (written before graphferry recorded them): those files are then not
    verified as they are read, only by size at open."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        return
    try:
        meta = read_object(os.path.join(path, "graphferry.json"))
    except (OSError, ValueError):
        return  # the engine opened it: nothing to add
    mapped = meta.get("feature") or meta.get("node_data") or meta.get("edge_data")
    if not mapped or meta.get("blocks"):
        return
    key = os.path.realpath(path)
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(
        f"{path}: graphferry.json records no per-block checksums (the dataset was written before graphferry "
        "recorded them), so its feature files are not verified as they are read, only by size; write it "
        "again (python -m graphferry convert / generate) or open it with verify=True",
        UserWarning,
        stacklevel=3,
    )
