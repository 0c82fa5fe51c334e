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
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

from tokkit.errors import TokkitError
from tokkit.text.default_corpus import default_texts

CHUNK_SIZE = 1 << 22  # 4 MiB: big enough to amortise per-chunk costs, small enough to balance 2 workers

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_ASCII_SPACE = frozenset(b" \t\n\r\x0b\x0c")


@dataclass(frozen=True)
class Source:
    """One input: a path, or stdin when ``path == "-"``."""

    path: str

    @property
    def compressed(self) -> bool:
        return Path(self.path).suffix.lower() in _OPENERS

    def open(self) -> BinaryIO:
        if self.path == "-":
            return sys.stdin.buffer
        opener = _OPENERS.get(Path(self.path).suffix.lower())
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
    for dirpath, dirnames, filenames in os.walk(root):
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


__all__ = ["CHUNK_SIZE", "Source", "resolve", "iter_chunks", "iter_source_chunks", "texts_as_chunks"]


_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "kib": 2**10, "mib": 2**20, "gib": 2**30}


def parse_size(text: str | int | None) -> int | None:
    """'10MB' -> 10_000_000 (decimal units, as in MB/s; KiB/MiB/GiB are binary). None stays None.

    >>> parse_size("10MB"), parse_size("1.5k"), parse_size("2MiB")
    (10000000, 1500, 2097152)
    """
    if text is None or isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise TokkitError(f"--size {text!r}: expected a number with an optional unit, e.g. 10MB")
    value = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if value <= 0:
        raise TokkitError(f"--size {text!r}: must be positive")
    return value


def read_lines(corpus: tuple[str, ...] | list[str] | None, *, max_bytes: int | None = None) -> list[str]:
    """The non-empty lines of CORPUS (files, directories, globs; default: the embedded corpus), up to max_bytes.

    >>> read_lines(None, max_bytes=200)[0][:20]  # the embedded corpus
    'The "assert" stateme'
    """
    if corpus:
        def chunks():
            for source, offset, chunk in iter_source_chunks(resolve(list(corpus))):
                try:
                    yield chunk.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise TokkitError(f"{source.path}: invalid UTF-8 at byte {offset + exc.start}") from None
    else:
        def chunks():
            yield from default_texts()
    lines, size = [], 0
    for text in chunks():
        for line in text.splitlines():
            if not line.strip():
                continue
            size += len(line.encode("utf-8", "surrogatepass")) + 1
            if max_bytes is not None and size > max_bytes:
                return lines
            lines.append(line)
    if not lines:
        raise TokkitError("the corpus is empty" + (f": {', '.join(corpus)}" if corpus else ""))
    return lines
