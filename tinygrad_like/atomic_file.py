"""Writing a file so that no reader ever sees half of it: every file the project writes goes through here.

`write_atomic(path, data)` writes `data` (bytes, or str as UTF-8) to a temporary file beside `path`, flushes
it to disk, renames it over `path` (atomic on POSIX and Windows), then makes the rename durable. If anything
fails on the way, the temporary file is removed and `path` still holds what it held before. The new file
gets the mode the old one had, or, for a new file, the mode `open()` would give it (0666 less the umask),
not the owner-only mode of a temporary file.
"""
from __future__ import annotations

import contextlib
import os
import tempfile


def _mode_for(path: str) -> int:
    """The permission bits the written file should have: the old file's, else open()'s default."""
    with contextlib.suppress(FileNotFoundError):
        return os.stat(path).st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _write(f, data: bytes) -> None:
    """The one place bytes hit the disk (tests replace it to simulate a crash mid-write)."""
    f.write(data)


def write_atomic(path, data: bytes | str) -> None:
    """Replace the file at `path` with `data` in one step (see the module's docstring)."""
    path = os.fspath(path)
    data = data.encode("utf-8") if isinstance(data, str) else data
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"write: directory {directory} does not exist (for {path})")
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            _write(f, data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable; not possible on every platform
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
