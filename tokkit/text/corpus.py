"""Find corpus files and read them as byte chunks that end at line ends.

Corpus arguments are files, ``-`` for stdin, directories (walked recursively; ``glob`` picks the
files, default every regular non-hidden file) and glob patterns. ``.gz``, ``.bz2`` and ``.xz``
files are decompressed transparently.

Chunking rule: a chunk ends just after a ``\\n``. A line longer than the chunk size may be cut,
but only just before an ASCII space that follows an ASCII non-space character: both the GPT-2
pattern and BERT splitting start a new piece there, so the cut never changes a word.

>>> import io
>>> [c for c in iter_chunks(io.BytesIO(b"one\\ntwo\\nthree\\n"), chunk_size=5)]
[b'one\\n', b'two\\n', b'three\\n']
"""
from __future__ import annotations

import bz2
import glob as globmod
import gzip
import lzma
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

from tokkit.errors import TokkitError

CHUNK_SIZE = 1 << 22  # 4 MiB: big enough to amortise per-chunk costs, small enough to balance 2 workers

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_ASCII_SPACE = frozenset(b" \t\n\r\x0b\x0c")


@dataclass(frozen=True)
class Source:
    """One input: a path, or stdin when ``path == "-"``."""

    path: str

    @property
    def compressed(self) -> bool:
        return Path(self.path).suffix in _OPENERS

    def open(self) -> BinaryIO:
        if self.path == "-":
            return sys.stdin.buffer
        opener = _OPENERS.get(Path(self.path).suffix)
        try:
            return opener(self.path, "rb") if opener else open(self.path, "rb")
        except FileNotFoundError:
            raise TokkitError(f"{self.path}: no such file (it disappeared while reading)") from None
        except OSError as exc:
            raise TokkitError(f"{self.path}: cannot read: {exc.strerror or exc}") from None

    def size(self) -> int | None:
        """Size on disk in bytes (None for stdin)."""
        if self.path == "-":
            return None
        try:
            return os.path.getsize(self.path)
        except OSError:
            return None


def resolve(paths: Iterable[str], *, pattern: str | None = None) -> list[Source]:
    """Turn corpus arguments into a sorted, de-duplicated list of sources.

    >>> resolve(["-"])
    [Source(path='-')]
    """
    sources: list[Source] = []
    seen: set[str] = set()
    for arg in paths:
        arg = str(arg)
        if arg == "-":
            found = ["-"]
        elif os.path.isdir(arg):
            found = _walk(arg, pattern)
            if not found:
                what = f"matching {pattern!r}" if pattern else "regular non-hidden"
                raise TokkitError(f"{arg}: directory has no {what} file")
        elif os.path.isfile(arg):
            found = [arg]
        elif globmod.has_magic(arg):
            found = sorted(p for p in globmod.glob(arg, recursive=True) if os.path.isfile(p))
            if not found:
                raise TokkitError(f"{arg}: pattern matches no file")
        elif os.path.exists(arg):
            raise TokkitError(f"{arg}: not a regular file or directory")
        else:
            raise TokkitError(f"{arg}: no such file or directory")
        for path in found:
            if path not in seen:
                seen.add(path)
                sources.append(Source(path))
    if not sources:
        raise TokkitError("no corpus given")
    return sources


def _walk(root: str, pattern: str | None) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=_unreadable_folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = os.path.join(dirpath, name)
            if not os.path.isfile(path):
                continue
            if pattern and not Path(name).match(pattern) and not Path(os.path.relpath(path, root)).match(pattern):
                continue
            out.append(path)
    return out


def _unreadable_folder(exc: OSError) -> None:
    """os.walk's error hook: a folder that cannot be listed is an error, never skipped in silence."""
    raise TokkitError(f"{exc.filename}: cannot read this folder ({exc.strerror or exc})")


def check_folder_tree(root: str | os.PathLike) -> None:
    """Raise a TokkitError naming the first folder under `root` (itself included) that cannot be listed.

    >>> check_folder_tree("no/such/folder")
    Traceback (most recent call last):
    tokkit.errors.TokkitError: no/such/folder: cannot read this folder (No such file or directory)
    """
    for _ in os.walk(root, onerror=_unreadable_folder):
        pass


def iter_chunks(stream: BinaryIO, *, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """Yield chunks of `stream` that end at a line end (or at a safe cut inside a long line)."""
    carry = b""
    while True:
        block = stream.read(chunk_size)
        if not block:
            break
        data = carry + block if carry else block
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) >= chunk_size:
            cut = _safe_cut(data)
        if cut == 0:
            carry = data
            continue
        yield data[:cut]
        carry = data[cut:]
    if carry:
        yield carry


def _safe_cut(data: bytes) -> int:
    """The last index i with data[i] == b' ' and data[i-1] an ASCII non-space; 0 when none."""
    i = data.rfind(b" ")
    while i > 0:
        prev = data[i - 1]
        if prev < 0x80 and prev not in _ASCII_SPACE:
            return i
        i = data.rfind(b" ", 0, i)
    return 0


def iter_source_chunks(sources: list[Source], *, chunk_size: int = CHUNK_SIZE) -> Iterator[tuple[Source, int, bytes]]:
    """Yield (source, byte offset of the chunk in its file, chunk) over all sources in order."""
    for source in sources:
        stream = source.open()
        try:
            offset = 0
            for chunk in iter_chunks(stream, chunk_size=chunk_size):
                yield source, offset, chunk
                offset += len(chunk)
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise TokkitError(f"{source.path}: cannot read: {exc}") from None
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()


def texts_as_chunks(texts: Iterable[str], *, chunk_size: int = CHUNK_SIZE) -> Iterator[list[bytes]]:
    """Group an iterable of str into batches of UTF-8 byte strings of about `chunk_size` bytes."""
    batch: list[bytes] = []
    size = 0
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, expected str")
        data = text.encode("utf-8", "surrogatepass")
        batch.append(data)
        size += len(data)
        if size >= chunk_size:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


__all__ = ["CHUNK_SIZE", "Source", "resolve", "check_folder_tree", "iter_chunks", "iter_source_chunks", "texts_as_chunks"]
