"""tokkit's one home for files: atomic writes of files and folders, and the JSON and text readers.

Every output goes to a temporary name beside its destination and is renamed into place, so an
error or Ctrl-C never leaves a half-written file. For folders (`atomic_dir`), a destination
holding an earlier tokkit output is replaced as a whole; a non-empty folder holding anything
else needs `force`; a destination that is a file is refused.

>>> import tempfile, os
>>> dest = os.path.join(tempfile.mkdtemp(), "out")
>>> with atomic_dir(dest, marker_files={"a.txt"}) as tmp:
...     _ = open(os.path.join(tmp, "a.txt"), "w").write("hi")
>>> os.listdir(dest)
['a.txt']
"""
from __future__ import annotations

import contextlib
import json
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


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w") -> Iterator:
    """Open a temporary file beside `path` for writing; rename it over `path` only on success.

    Text modes write UTF-8 with "\n" line ends. On any exception (Ctrl-C included) the temporary
    file is removed and `path` is left as it was.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.txt")
    >>> with atomic_open(p) as f:
    ...     _ = f.write("hi")
    >>> open(p).read()
    'hi'
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.tmp-", dir=folder)
    try:
        if "b" in mode:
            f = os.fdopen(fd, mode)
        else:
            f = os.fdopen(fd, mode, encoding="utf-8", newline="\n")
        with f:
            yield f
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike, data: str | bytes) -> None:
    """Write `data` (str as UTF-8, or bytes) to `path` through a temporary name.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> atomic_write(p, b"ok"); open(p, "rb").read()
    b'ok'
    """
    with atomic_open(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def dump_json(obj) -> str:
    """The one JSON formatting tokkit writes: 2-space indent, non-ASCII kept, insertion order."""
    return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"


def read_text(path: str | os.PathLike) -> str:
    """A UTF-8 file's text; unreadable files and invalid UTF-8 are a TokkitError naming the file."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TokkitError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TokkitError(f"{path}: line {line}: invalid UTF-8 at byte {exc.start}") from None


def read_json(path: str | os.PathLike):
    """Parse a JSON file; a syntax error or a repeated key names the file and line."""

    def no_duplicates(pairs):
        seen = {}
        for key, value in pairs:
            if key in seen:
                raise TokkitError(f"{path}: duplicate key {key!r}")
            seen[key] = value
        return seen

    text = read_text(path)
    try:
        return json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise TokkitError(f"{path}: line {exc.lineno}: invalid JSON ({exc.msg})") from None


def prepare_folder(folder: str) -> str:
    """Create the output folder if needed; a clear TokkitError when it cannot be written."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise TokkitError(f"{folder}: output path is a file, not a folder")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise TokkitError(f"{folder}: cannot create the output folder ({exc.strerror or exc})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise TokkitError(f"{folder}: output folder is not writable")
    return folder
