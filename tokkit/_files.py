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
import ctypes
import errno
import fcntl
import glob
import json
from json.encoder import encode_basestring as _json_string  # json's compiled encoder
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
import uuid
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

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


def check_output_not_input(output: str | os.PathLike, inputs: Iterable[str | os.PathLike | None], *,
                           option: str = "-o/--output") -> None:
    """Refuse an output that overlaps an input, before any work: every command calls this.

    The output may not be an input (by path, through a symbolic link, or as a hard link of it),
    lie inside an input folder, or be a folder that holds an input (a folder output is replaced
    or filled as a whole). So `tokkit encode -o FILE FILE` cannot replace its text with ids, and
    `-o TOKDIR/tokenizer.json` cannot replace the tokenizer being read. In `inputs`, "-" (stdin)
    and None are skipped, and a glob pattern stands for itself and the paths it matches.

    >>> check_output_not_input("tok/ids.txt", ["corpus.txt", "tok"])
    Traceback (most recent call last):
    tokkit.errors.TokkitError: -o/--output tok/ids.txt: lies inside the input folder tok; write it elsewhere
    >>> check_output_not_input("ids.txt", ["corpus.txt", "-"])
    """
    out = Path(os.path.realpath(output))
    for given in _expand_inputs(inputs):
        inp = Path(os.path.realpath(given))
        if out == inp or _same_file(output, given):
            why = f"is also an input ({given})" if os.fspath(given) != os.fspath(output) else "is also an input"
        elif inp in out.parents:
            why = f"lies inside the input folder {given}"
        elif out in inp.parents:
            why = f"holds the input {given}"
        else:
            continue
        raise TokkitError(f"{option} {output}: {why}; write it elsewhere")


def _expand_inputs(inputs: Iterable[str | os.PathLike | None]) -> Iterator[str | os.PathLike]:
    """The paths `inputs` name: stdin and None left out, glob patterns expanded (and kept)."""
    for given in inputs:
        if given is None or os.fspath(given) in ("-", ""):
            continue
        yield given  # also as a literal name: a file may be called "x[1].txt"
        if isinstance(given, str) and glob.has_magic(given):
            yield from glob.glob(given, recursive=True)


def _same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Two existing paths naming one file (hard links, bind mounts); False when either is missing."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


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
    """Yield a temporary folder beside `dest`; on success it replaces `dest`, on any error it vanishes.

    Replacing is safe at every instant: where the OS can (Linux's renameat2 with RENAME_EXCHANGE)
    the new folder and the old one swap names in one step, so `dest` always exists, holding either
    the old or the new output. Elsewhere the old folder is first renamed to `.DEST.old-PID-...`;
    if the process is killed between the two renames, the next run on the same destination puts it
    back (and says so). Temporary folders of dead runs (`.DEST.tmp-PID-...`) are removed the same
    way. Ctrl-C and SIGTERM during the swap take effect once it and the clean-up are done.
    """
    dest = check_destination(dest, marker_files=marker_files, force=force)
    tmp = temporary_beside(dest)
    try:
        yield tmp
        replace_folder(tmp, dest)
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


def temporary_beside(dest: str | os.PathLike) -> str:
    """A new empty folder `.DEST.tmp-PID-...` beside `dest` (what an interrupted run left there is
    cleared first); the next run removes it if this process dies before it is used."""
    dest = Path(dest)
    recover_interrupted(dest)
    tmp = tempfile.mkdtemp(prefix=f".{dest.name}.tmp-{os.getpid()}-", dir=dest.resolve().parent)
    os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes it private; the result should look like any new folder
    return tmp


def replace_folder(tmp: str | os.PathLike, dest: str | os.PathLike) -> None:
    """Put the folder `tmp` in `dest`'s place in one step (see atomic_dir), the old `dest` removed."""
    dest = Path(dest)
    parent = dest.resolve().parent
    # Ctrl-C or SIGTERM from here on acts once the new output is in place and the old one gone:
    # stopping between the steps would leave `dest` missing or a stale folder beside it.
    with signals_held():
        if dest.exists() and _exchange(tmp, dest):
            pass  # tmp now holds the old output, removed below
        elif dest.exists():
            old = parent / f".{dest.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            os.rename(dest, old)
            os.rename(tmp, dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, dest)
        if os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


class FolderLock:
    """Hold an output folder for one run: an exclusive `flock` on `.DEST.lock` beside it, so a
    second run into the same folder is refused in one line instead of interleaving its files.

    The lock ends with the process (flock), so a killed run blocks nothing; the file is removed on
    release. Parent folders it had to create are removed again when they are left empty.

    >>> import tempfile, os
    >>> d = os.path.join(tempfile.mkdtemp(), "out")
    >>> lock = FolderLock(d)
    >>> FolderLock(d)
    Traceback (most recent call last):
    tokkit.errors.TokkitError: ... is in use by another run (process ...); wait for it to end or write elsewhere
    >>> lock.release(); FolderLock(d).release()
    """

    def __init__(self, dest: str | os.PathLike):
        dest = Path(dest)
        self.path = dest.absolute().parent / f".{dest.name}.lock"
        self.created = _make_parents(self.path.parent)
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                self._drop_parents()
                raise TokkitError(f"{dest}: cannot hold the output folder ({exc.strerror})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
                os.close(fd)
                raise TokkitError(f"{dest} is in use by another run (process {holder}); wait for it to end or "
                                  "write elsewhere") from None
            try:  # the run we waited on may have removed the file after we opened it: lock the one there now
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
        self.fd = fd

    def release(self) -> None:
        """Remove the lock file and let the folder go (once; later calls do nothing)."""
        if self.fd is None:
            return
        try:
            os.unlink(self.path)  # while still held, so no other run holds a file about to vanish
        except FileNotFoundError:
            pass
        os.close(self.fd)
        self.fd = None
        self._drop_parents()

    def _drop_parents(self) -> None:
        for folder in reversed(self.created):
            try:
                folder.rmdir()
            except OSError:
                break  # not empty: the run's output is there


def _make_parents(folder: Path) -> list[Path]:
    """Create `folder` and its missing parents; return those created, outermost first."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            pass
        except OSError as exc:
            raise TokkitError(f"{path}: cannot create the output's folder ({exc.strerror})") from None
    return list(reversed(missing))


@contextlib.contextmanager
def signals_held(signums=(signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """Hold SIGINT and SIGTERM for a few steps that must not be cut apart, then act on them as usual.

    Between the two renames of a folder swap without renameat2 the destination is missing; a
    Ctrl-C there waits until the new folder is in place. Only the main thread runs signal
    handlers, so elsewhere (and for handlers not set from Python) nothing changes.

    >>> got = []
    >>> before = signal.signal(signal.SIGUSR1, lambda n, frame: got.append("handled"))
    >>> with signals_held((signal.SIGUSR1,)):
    ...     os.kill(os.getpid(), signal.SIGUSR1)
    ...     got.append("block done")
    >>> got
    ['block done', 'handled']
    >>> _ = signal.signal(signal.SIGUSR1, before)
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for signum in signums:
        handler = signal.getsignal(signum)
        if handler is not None and handler != signal.SIG_IGN:
            previous[signum] = signal.signal(signum, lambda n, frame: caught.append(n))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if caught:
            handler = previous[caught[0]]
            if callable(handler):
                handler(caught[0], None)
            else:  # the default action (SIG_DFL): end the process as the signal would have
                os.kill(os.getpid(), caught[0])


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where that is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):  # file system or kernel without it
        return False
    raise OSError(err, os.strerror(err), os.fspath(b))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover_interrupted(dest: str | os.PathLike, *, say=None) -> list[str]:
    """Undo what an interrupted replacement of `dest` left beside it; return what was done.

    A `.DEST.old-PID-*` folder of a dead process comes back as `dest` when `dest` is missing (the
    process died between its two renames) and is removed otherwise; `.DEST.tmp-PID-*` folders of
    dead processes are removed. Each action is printed to stderr (or passed to `say`).

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); os.mkdir(os.path.join(d, ".out.old-999999999-ab"))
    >>> recover_interrupted(os.path.join(d, "out"), say=lambda m: None)[0].startswith("restored")
    True
    """
    dest = Path(dest)
    parent = dest.resolve().parent
    say = say or (lambda m: sys.stderr.write(f"tokkit: {m}\n"))
    done = []
    if not parent.is_dir():
        return done
    for entry in sorted(parent.iterdir()):
        for kind in ("old", "tmp"):
            prefix = f".{dest.name}.{kind}-"
            if not entry.name.startswith(prefix) or not entry.is_dir():
                continue
            pid = entry.name[len(prefix):].split("-", 1)[0]
            if pid.isdigit() and _pid_alive(int(pid)):
                continue  # another run is writing right now
            if kind == "old" and not dest.exists():
                os.rename(entry, dest)
                done.append(f"restored {dest} from {entry.name}, left by an interrupted replacement")
            else:
                shutil.rmtree(entry, ignore_errors=True)
                done.append(f"removed {entry.name}, left behind by an interrupted run")
    for message in done:
        say(message)
    return done


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w") -> Iterator:
    """Open a temporary file beside `path` for writing; rename it over `path` only on success.

    Text modes write UTF-8 with "\n" line ends. On any exception (Ctrl-C included) the temporary
    file is removed and `path` is left as it was. A `path` that is a device, a named pipe or a
    socket (`/dev/null`, `/dev/stdout`, a FIFO) is written in place: renaming over it would
    replace the device itself with a plain file.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.txt")
    >>> with atomic_open(p) as f:
    ...     _ = f.write("hi")
    >>> open(p).read()
    'hi'
    """
    path = os.fspath(path)
    if _is_special_file(path):
        with _open_for_writing(path, mode) as f:
            yield f
        return
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.tmp-", dir=folder)
    try:
        with _open_for_writing(fd, mode) as f:
            yield f
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _open_for_writing(file: str | int, mode: str):
    """`open` for a path or a descriptor: binary as is, text as UTF-8 with "\n" line ends."""
    if "b" in mode:
        return open(file, mode)
    return open(file, mode, encoding="utf-8", newline="\n")


def _is_special_file(path: str | os.PathLike) -> bool:
    """True for an existing path that is not a regular file or a folder (a device, FIFO or socket)."""
    try:
        kind = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(kind) or stat.S_ISDIR(kind))


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
    """The one JSON formatting tokkit writes: 2-space indent, non-ASCII kept, insertion order.

    The text of json.dumps(obj, ensure_ascii=False, indent=2), made faster: with an indent, json
    formats in Python generators, a quarter of a second for a 32k vocabulary's merges; here every
    string goes through json's compiled string encoder and containers are joined at once.

    >>> print(dump_json({"a": [1, "é"], "b": {}}), end="")
    {
      "a": [
        1,
        "é"
      ],
      "b": {}
    }
    """
    return _pretty(obj, "") + "\n"


def _pretty(obj, pad: str) -> str:
    """json.dumps(obj, ensure_ascii=False, indent=2) for `obj` nested at indent `pad`."""
    kind = type(obj)
    if kind is str:
        return _json_string(obj)
    if kind is int:
        return int.__repr__(obj)
    if kind is dict and obj and all(type(k) is str for k in obj):
        inner = pad + "  "
        items = ",\n".join(f"{inner}{_json_string(k)}: {_pretty(v, inner)}" for k, v in obj.items())
        return f"{{\n{items}\n{pad}}}"
    if kind in (list, tuple) and obj:
        inner = pad + "  "
        return f"[\n{inner}" + f",\n{inner}".join([_pretty(v, inner) for v in obj]) + f"\n{pad}]"
    # the rest (floats, None, booleans, empty containers, other keys) as json writes them
    return json.dumps(obj, ensure_ascii=False, indent=2).replace("\n", "\n" + pad)


def stdin_bytes() -> BinaryIO:
    """Standard input as a binary stream; a closed stdin (`<&-`) is a TokkitError saying so.

    >>> stdin_bytes() is not None
    True
    """
    stream = getattr(sys.stdin, "buffer", sys.stdin)  # None when the process started without fd 0
    if stream is None:
        raise TokkitError("standard input is closed; give input files or connect stdin")
    return stream


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


def read_json(path: str | os.PathLike, *, parse_float=None):
    """Parse a JSON file; a syntax error or a repeated key names the file and line. `parse_float`
    reads each number with a fraction or an exponent (json.loads' hook)."""

    def no_duplicates(pairs):
        seen = dict(pairs)  # built in C; a key seen twice leaves it shorter than the pairs
        if len(seen) != len(pairs):
            keys = set()
            for key, _ in pairs:
                if key in keys:
                    raise TokkitError(f"{path}: duplicate key {key!r}")
                keys.add(key)
        return seen

    return parse_json(read_text(path), str(path), object_pairs_hook=no_duplicates, parse_float=parse_float)


def parse_json(text: str, where: str, *, one_line: bool = False, **hooks):
    """json.loads(text), every failure one TokkitError starting with `where`: a syntax error (with
    its line), nesting past Python's recursion limit, or a whole number longer than the 4,300
    digits Python converts (json.loads raises a bare ValueError for one). `one_line`: `where`
    names the line already, and a syntax error names its column.

    >>> parse_json("[1, 2]", "f.json")
    [1, 2]
    >>> parse_json("1" * 5000, "f.json")
    Traceback (most recent call last):
    tokkit.errors.TokkitError: f.json: invalid JSON (a number of more digits than the 4,300 Python reads)
    """
    try:
        return json.loads(text, **hooks)
    except json.JSONDecodeError as exc:
        if one_line:
            raise TokkitError(f"{where}: invalid JSON ({exc.msg} at column {exc.colno})") from None
        raise TokkitError(f"{where}: line {exc.lineno}: invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise TokkitError(f"{where}: JSON nested too deeply") from None
    except TokkitError:
        raise  # a hook's own refusal
    except ValueError as exc:
        if "digits" not in str(exc):
            raise
        limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 4300
        raise TokkitError(f"{where}: invalid JSON (a number of more digits than the {limit:,} Python reads)") from None


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
