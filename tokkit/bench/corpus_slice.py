"""The benchmark input: a line-aligned prefix of the corpus, written to one temporary file.

Every contender reads the same bytes: the corpus files concatenated in order (a missing final
newline is added), cut back to the last line end at or before `size` bytes. Without corpus paths
the embedded default corpus (CPython's reference documentation) is used.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> _ = open(os.path.join(d, "a.txt"), "w").write("one\\ntwo\\nthree\\n")
>>> s = make_slice([os.path.join(d, "a.txt")], size=9, workdir=d)
>>> open(s.path).read(), s.nbytes
('one\\ntwo\\n', 8)
"""
from __future__ import annotations

import codecs
import os
from dataclasses import dataclass

from tokkit.errors import TokkitError
from tokkit.text.corpus import iter_source_chunks, resolve
from tokkit.text.default_corpus import default_texts


@dataclass
class CorpusSlice:
    """A benchmark input file: `nbytes` UTF-8 bytes taken from `sources`, plus a note for the reader."""

    path: str
    nbytes: int
    sources: list
    note: str = ""

    @property
    def mb(self) -> float:
        return self.nbytes / 1e6

    def text(self) -> str:
        with open(self.path, encoding="utf-8") as f:
            return f.read()


def _default_chunks():

    for line in default_texts():
        yield "<embedded default corpus>", line.encode("utf-8")


def _file_chunks(paths):

    for source, _, chunk in iter_source_chunks(resolve(paths)):
        yield source.path, chunk


def make_slice(paths: list[str] | None, *, size: int | None, workdir: str, name: str = "corpus") -> CorpusSlice:
    """Write the first `size` bytes (line-aligned; all when None) of the corpus to workdir/NAME.txt."""
    chunks = _file_chunks(paths) if paths else _default_chunks()
    out_path = os.path.join(workdir, f"{name}.txt")
    total, sources, last_source, ends_nl, truncated = 0, [], None, True, False
    with open(out_path, "wb") as out:
        for source, chunk in chunks:
            if source != last_source:
                if not ends_nl:  # files are joined at line boundaries
                    out.write(b"\n")
                    total += 1
                sources.append(source)
                last_source = source
            if size is not None and total + len(chunk) > size:
                cut = chunk.rfind(b"\n", 0, size - total) + 1
                out.write(chunk[:cut])
                total += cut
                truncated = True
                break
            out.write(chunk)
            total += len(chunk)
            ends_nl = chunk.endswith(b"\n")
    with open(out_path, "rb") as f:
        data_is_blank = not f.read(1 << 20).strip()
    if total == 0 or (data_is_blank and total < 1 << 20):
        raise TokkitError("the corpus is empty" + (f" ({', '.join(map(str, paths))})" if paths else ""))
    note = ""
    if size is not None and not truncated:
        note = f"--size {size / 1e6:g} MB is larger than the corpus: using all {total / 1e6:.2f} MB"
    _check_utf8(out_path)
    return CorpusSlice(out_path, total, sources, note)


def _check_utf8(path: str) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")()
    with open(path, "rb") as f:
        offset = 0
        for block in iter(lambda: f.read(1 << 24), b""):
            try:
                decoder.decode(block)
            except UnicodeDecodeError as exc:
                raise TokkitError(f"corpus is not valid UTF-8 near byte {offset + max(exc.start, 0)}") from None
            offset += len(block)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise TokkitError("corpus ends inside a UTF-8 character") from None


def slice_file(src: CorpusSlice, size: int, workdir: str, name: str) -> CorpusSlice:
    """A line-aligned prefix of an existing slice (for the scaling suite's smaller sizes)."""
    return make_slice([src.path], size=size, workdir=workdir, name=name)


def corpus_mb(paths: list[str]) -> tuple[list[str], float | None]:
    """The files of corpus arguments and their size in MB (None when one is compressed or stdin,
    whose text size is not known in advance)."""
    sources = resolve(paths)
    if any(s.compressed or s.size() is None for s in sources):
        return [s.path for s in sources], None
    return [s.path for s in sources], sum(s.size() for s in sources) / 1e6
