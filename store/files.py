"""Files written whole: a reader, or a crash, sees the old file or the new one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, data: bytes, mode: int | None = None) -> None:
    """Temporary file in the same folder, fsync, rename, fsync of the folder (so the
    rename itself survives a power cut). `mode`: the file's permission bits; None
    keeps those of the file it replaces, or gives a new one what `open` would (0666
    less the umask). The temporary file is 0600 until its bits are set."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def _umask() -> int:
    current = os.umask(0o022)  # reading the umask means setting it; put it back at once
    os.umask(current)
    return current
