"""Write a whole output folder atomically: build it beside its destination, then move it in.

A destination holding an earlier tokkit output is replaced as a whole; a non-empty folder
holding anything else needs `force`; a destination that is a file is refused.

>>> import tempfile, os
>>> dest = os.path.join(tempfile.mkdtemp(), "out")
>>> with atomic_dir(dest, marker_files={"a.txt"}) as tmp:
...     _ = open(os.path.join(tmp, "a.txt"), "w").write("hi")
>>> os.listdir(dest)
['a.txt']
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Iterable, Iterator

from tokkit.errors import TokkitError


def check_destination(dest: str | os.PathLike, *, marker_files: Iterable[str], force: bool = False) -> Path:
    """Refuse a destination that would lose someone's files; return it as a Path."""
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise TokkitError(f"{dest}: output path is a file, not a folder")
    _refuse_precious(dest)
    if dest.is_dir() and not force:
        names = {p.name for p in dest.iterdir()}
        ours = set(marker_files)
        if names and not (names <= ours | {"tokenizer_config.json", "special_tokens_map.json"} and names & ours):
            raise TokkitError(f"{dest}: folder is not empty and does not hold a tokkit output; use --force to replace it")
    parent = dest.resolve().parent
    if not parent.is_dir():
        raise TokkitError(f"{parent}: parent folder does not exist")
    if not os.access(parent, os.W_OK):
        raise TokkitError(f"{parent}: folder is not writable")
    return dest


def _refuse_precious(dest: Path) -> None:
    """Never replace a folder whose loss would hurt: /, the home folder, a mount point, or the
    current folder or one of its parents (`--force -o /tmp` must not wipe /tmp)."""
    real = dest.resolve()
    cwd = Path.cwd().resolve()
    precious = {Path("/"), Path.home().resolve(), Path(tempfile.gettempdir()).resolve()}
    if real in precious or real == cwd or real in cwd.parents or (real.exists() and os.path.ismount(real)):
        raise TokkitError(f"{dest}: refusing to replace this folder; choose a new or dedicated output folder")


@contextlib.contextmanager
def atomic_dir(dest: str | os.PathLike, *, marker_files: Iterable[str], force: bool = False) -> Iterator[str]:
    """Yield a temporary folder beside `dest`; on success it replaces `dest`, on any error it vanishes."""
    dest = check_destination(dest, marker_files=marker_files, force=force)
    parent = dest.resolve().parent
    tmp = tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it private; the result should look like any new folder
    try:
        yield tmp
        old = None
        if dest.exists():
            old = parent / f".{dest.name}.old-{uuid.uuid4().hex[:8]}"
            os.rename(dest, old)
        os.rename(tmp, dest)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
