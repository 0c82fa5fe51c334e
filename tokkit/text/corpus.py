"""Find corpus files and read them as byte chunks that end at line ends.

Corpus arguments are files, ``-`` for stdin, directories (walked recursively; ``glob`` picks the
files, default every regular non-hidden file) and glob patterns. ``.gz``, ``.bz2`` and ``.xz``
files are decompressed transparently.

Chunking rule: a chunk ends just after a ``\\n``. A line longer than half the chunk size may be
cut where both the GPT-2 pattern and BERT splitting start a new piece anyway (before a space that
follows a visible character, or between a letter and punctuation), so the cut never changes a
word; only text with no such place in half a chunk (a run of whitespace or NUL bytes) is cut at
a character boundary. Chunking is linear in time and holds at most two chunks in memory.

>>> import io
>>> [c for c in iter_chunks(io.BytesIO(b"one\\ntwo\\nthree\\n"), chunk_size=6)]
[b'one\\n', b'two\\n', b'three\\n']
"""
from __future__ import annotations

import bz2
import glob as globmod
import gzip
import lzma
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

import regex

from tokkit._files import stdin_bytes
from tokkit.errors import TokkitError
from tokkit.text.default_corpus import default_texts

CHUNK_SIZE = 1 << 22  # 4 MiB: big enough to amortise per-chunk costs, small enough to balance 2 workers

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


@dataclass(frozen=True)
class Source:
    """One input: a path, or stdin when ``path == "-"``."""

    path: str

    @property
    def compressed(self) -> bool:
        return Path(self.path).suffix.lower() in _OPENERS

    def open(self) -> BinaryIO:
        if self.path == "-":
            return stdin_bytes()
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
    walked = False
    for arg in paths:
        arg = str(arg)
        if arg == "-":
            found = ["-"]
        elif os.path.isdir(arg):
            walked = True
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
    if pattern and not walked:
        raise TokkitError(f"--glob {pattern!r} picks files inside folders, and no folder is given")
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
    """Yield chunks of `stream` of at most `chunk_size` bytes that end at a line end or a safe cut.

    Each chunk is cut in the second half of the next `chunk_size` bytes (see `find_cut`), so
    every byte is searched at most twice and memory holds two chunks: linear time and bounded
    memory, whatever the lines look like.
    """
    if chunk_size < 2:
        raise ValueError(f"chunk_size must be at least 2 bytes, got {chunk_size}")
    carry = b""
    eof = False
    while not eof:
        block = stream.read(chunk_size)
        eof = not block
        data = carry + block if carry else block
        pos = 0
        # Until the end, keep 3 bytes past the window: a cut must see the whole character at it.
        while len(data) - pos > chunk_size + (0 if eof else 3):
            cut = find_cut(data, pos + chunk_size // 2, pos + chunk_size)
            yield data[pos:cut]
            pos = cut
        carry = data[pos:]
    if carry:
        yield carry


def find_cut(data: bytes, lo: int, hi: int) -> int:
    """Where to end a chunk within data[lo:hi] (lo > 0): after the last line end, else at the last
    place both pre-tokenizers split at anyway (`safe_cut`), else at the last character boundary.

    The last case only happens in text with no line end and no such place in hi - lo bytes: a run
    of whitespace or NUL bytes, or one "word" that long. It may split that run differently from
    a whole-text pass; no vocabulary learns such a piece anyway.

    >>> find_cut(b"ab\\ncd ef gh", 2, 12), find_cut(b"ab cd ef.gh", 2, 11), find_cut(b"        ", 2, 6)
    (3, 9, 6)
    """
    nl = data.rfind(b"\n", lo, hi)
    if nl >= 0:
        return nl + 1
    cut = safe_cut(data, lo, hi)
    if cut:
        return cut
    def inside(i: int) -> bool:  # is i in the middle of a UTF-8 sequence?
        return i < len(data) and 0x80 <= data[i] <= 0xBF

    cut = hi
    while cut > lo and inside(cut):
        cut -= 1
    if inside(cut):  # a tiny chunk_size: go forward instead
        cut = hi
        while cut < hi + 3 and inside(cut):
            cut += 1
    return cut


# The last place in a text where both the GPT-2 pattern and BERT pre-tokenization surely split,
# whatever comes before or after it:
#  - before an ASCII space that follows a visible character (letter, mark, number, punctuation,
#    symbol): a piece never runs from a visible character into a space, and the space starts
#    the next one (a whitespace piece, or " word");
#  - between a letter or number and punctuation other than the apostrophe (either order): GPT-2
#    ends a letter, number or punctuation run there, BERT splits punctuation off (an apostrophe
#    may start a contraction such as 's).
# Each pattern matches the character just before the cut, searching backwards ((?r)).
_BEFORE_SPACE = regex.compile(r"(?r)[\p{L}\p{M}\p{N}\p{P}\p{S}](?=\x20)")
_AT_PUNCTUATION = regex.compile(r"(?r)[\p{L}\p{N}](?=[\p{P}--'])|[\p{P}--'](?=[\p{L}\p{N}])", regex.V1)
# Bytes that are never a visible character (ASCII controls and space), and those that can never
# be punctuation (ASCII letters, digits, controls and space): windows without anything else skip
# the slower regex searches.
_BLANK = bytes(range(0x21)) + b"\x7f"
_NOT_PUNCTUATION = _BLANK + bytes(range(0x30, 0x3A)) + bytes(range(0x41, 0x5B)) + bytes(range(0x61, 0x7B))


def safe_cut(data: bytes, lo: int, hi: int) -> int:
    """The last position in data[lo:hi] where both pre-tokenizers split anyway (a byte offset,
    never inside a character and never at lo), or 0 when there is none; invalid UTF-8 is never
    next to a cut. Linear in hi - lo.

    >>> safe_cut("один два".encode(), 1, 15), safe_cut(b"a\\x00\\x00 \\x00\\x00", 1, 6), safe_cut("中文。中文".encode(), 1, 15)
    (8, 0, 9)
    """
    window = data[lo:hi]
    if not window.translate(None, _BLANK):
        return 0  # only spaces and control bytes: a whitespace or NUL run, nothing to split at
    has_space = b" " in window
    has_punctuation = bool(window.translate(None, _NOT_PUNCTUATION))
    if not has_space and not has_punctuation:
        return 0
    start = lo
    while start > 0 and 0x80 <= data[start] <= 0xBF:
        start -= 1  # begin on a character, so the text decodes
    start = max(start - 1, 0)  # and hold the character before lo
    while hi < len(data) and 0x80 <= data[hi] <= 0xBF:
        hi += 1  # end on a character too
    text = data[start:hi].decode("utf-8", "surrogateescape")
    head = len(data[start:lo].decode("utf-8", "surrogateescape")) if lo > start else 0
    best = 0
    for pattern, wanted in ((_BEFORE_SPACE, has_space), (_AT_PUNCTUATION, has_punctuation)):
        m = pattern.search(text, max(head, best)) if wanted else None
        if m is not None:
            best = m.start() + 1  # the cut: just after the matched character
    if not best:
        return 0
    return start + len(text[:best].encode("utf-8", "surrogateescape"))


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
            if source.path != "-":
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


__all__ = ["CHUNK_SIZE", "Source", "resolve", "check_folder_tree", "iter_chunks", "iter_source_chunks",
           "texts_as_chunks", "parse_size", "read_lines"]


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
    number = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if number >= 2**63:  # also inf, from a number with hundreds of digits
        raise TokkitError(f"--size {text!r}: too large (at most 2**63 - 1 bytes)")
    value = int(number)
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
