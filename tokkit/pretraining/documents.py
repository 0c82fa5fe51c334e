"""Documents from corpus files, streamed: blank lines separate them, a lone line before a blank is a title.

A block of one line followed by a blank line (a title, as in Wikipedia dumps) belongs to the
block after it. Files may be plain or compressed (.gz, .bz2, .xz); a folder stands for the
sorted files inside it. A labelled file (.jsonl, .json, .csv, .tsv, read by tokkit.labelled) is read
for its text fields alone, one document per row (`labelled_documents`). Documents are grouped into small runs (`iter_groups`) that are the unit
of work shared out between DataLoader workers and ranks.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "c.txt")
>>> _ = open(path, "w").write("Title\\n\\nFirst line.\\nSecond line.\\n\\nOther doc.\\nMore.\\n")
>>> list(iter_documents(path))
[['Title', 'First line.', 'Second line.'], ['Other doc.', 'More.']]
"""
from __future__ import annotations

import io
import lzma
import os
from pathlib import Path
from typing import Iterable, Iterator, List, Sequence, Tuple, Union

import regex

from tokkit.errors import TokkitError
from tokkit.labelled.files import is_labelled_file, read_texts
from tokkit.labelled.rows import Fields
from tokkit.text.corpus import Source, check_folder_tree

PathLike = Union[str, os.PathLike]
Document = List[str]

# Streaming bound: a file without blank lines would otherwise be one endless document.
MAX_DOCUMENT_CHARS = 1 << 22
# A group closes after this many documents or characters, whichever comes first.
GROUP_DOCUMENTS = 64
GROUP_CHARS = 1 << 20

# A sentence ends at . ! ? (maybe followed by a closing quote or bracket) before whitespace and
# a capital letter or digit: a heuristic, good enough to give NSP several segments per paragraph.
_SENTENCE_END = regex.compile(r"(?<=[.!?][\"'\u201d\u2019)\]]?)\s+(?=[\"'\u201c\u2018(\[]?[\p{Lu}\p{N}])")


def expand_paths(paths: Union[PathLike, Sequence[PathLike]]) -> List[Path]:
    """Paths as a list of files: a folder becomes its sorted files (recursively, hidden ones skipped)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: List[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            check_folder_tree(p)  # pathlib's glob skips unreadable folders without a word
            out.extend(sorted(f for f in p.rglob("*") if f.is_file() and not f.name.startswith(".")))
        elif p.is_file():
            out.append(p)
        else:
            raise TokkitError(f"{p}: no such file or folder")
    if not out:
        raise TokkitError("no corpus files given")
    return out


def _lines(path: Path) -> Iterator[Tuple[int, str]]:
    """(byte length, text without its line end) of each line; lines end where Python's universal
    newlines end them (\\n, \\r\\n or \\r), and the length counts the end too."""
    try:
        with io.TextIOWrapper(Source(str(path)).open(), encoding="utf-8", newline="") as f:
            for line in f:
                yield len(line.encode("utf-8")), line.rstrip()
    except UnicodeDecodeError as exc:
        raise TokkitError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise TokkitError(f"{path}: cannot read ({exc})") from None


def labelled_documents(path: PathLike, fields: Fields = Fields()) -> List[Document]:
    """Each row of a labelled file as one document: the non-blank lines of its text, then of its pair's."""
    docs = []
    for row in read_texts(path, fields=fields):
        lines = [line.rstrip() for part in (row["text"], row["text_pair"]) if part
                 for line in part.splitlines() if line.strip()]
        if lines:  # an empty text is no document, as a run of blank lines is none
            docs.append(lines)
    if not docs:
        raise TokkitError(f"{path}: no text to pretrain on: field {fields.text!r} is empty in every row")
    return docs


def file_spans(path: Path, fields: Fields = Fields()) -> Iterator[Tuple[int, int, Document]]:
    """(first byte, end byte, lines) of each document of one file, in file order.

    A labelled file's span is (k, k + 1) for its k-th document: it is read whole, by rows, not by bytes.
    The span runs from the document's first line (its title, if any) to the end of its last
    line; every non-blank line inside it belongs to the document, so `read_span` gets the
    document back from the bytes alone. Offsets count decompressed bytes for a compressed file.
    """
    if is_labelled_file(path):
        yield from ((k, k + 1, doc) for k, doc in enumerate(labelled_documents(path, fields)))
        return
    titles: Document = []  # lone lines waiting for the block they head
    block: Document = []
    size = 0
    start = pos = 0  # start: first byte of the pending titles + block; pos: bytes read so far
    for length, line in _lines(path):
        if not titles and not block:
            start = pos
        pos += length
        if line.strip():
            block.append(line)
            size += len(line)
            if size >= MAX_DOCUMENT_CHARS:
                yield start, pos, titles + block
                titles, block, size = [], [], 0
            continue
        if len(block) == 1:
            titles.extend(block)
        elif block:
            yield start, pos - length, titles + block
            titles = []
        block, size = [], 0
    if titles or block:
        yield start, pos, titles + block


def read_span(data: bytes) -> Document:
    """The document held by the bytes of one span (see file_spans): its non-blank lines.

    >>> read_span(b"Title\\r\\n\\r\\nFirst line.  \\nSecond.")
    ['Title', 'First line.', 'Second.']
    """
    text = data.decode("utf-8")
    return [line.rstrip() for line in io.StringIO(text, newline=None) if line.strip()]


def _file_documents(path: Path, fields: Fields = Fields()) -> Iterator[Document]:
    for _start, _end, doc in file_spans(path, fields):
        yield doc


def iter_documents(paths: Union[PathLike, Sequence[PathLike]], fields: Fields = Fields()) -> Iterator[Document]:
    """Yield each document of the corpus, in file order, as its list of non-blank lines.

    Memory holds one document at a time (at most MAX_DOCUMENT_CHARS characters: a longer run of
    lines without a blank one is cut there), or one labelled file's texts. A document never spans
    two files. `fields` names the text fields of labelled files.
    """
    for path in expand_paths(paths):
        yield from _file_documents(path, fields)


def iter_groups(paths: Union[PathLike, Sequence[PathLike]],
                fields: Fields = Fields()) -> Iterator[Tuple[int, List[Document]]]:
    """Yield (group number, documents): runs of up to GROUP_DOCUMENTS documents / GROUP_CHARS characters.

    Groups depend on the text alone, so every worker sees the same numbering.
    """
    group: List[Document] = []
    chars = 0
    number = 0
    for doc in iter_documents(paths, fields):
        group.append(doc)
        chars += sum(len(line) for line in doc)
        if len(group) >= GROUP_DOCUMENTS or chars >= GROUP_CHARS:
            yield number, group
            number += 1
            group, chars = [], 0
    if group:
        yield number, group


def split_sentences(line: str) -> List[str]:
    """Split a line (often a whole paragraph) into sentences; NSP's segments are sentences.

    >>> split_sentences('It rained. "Why?" she asked. Then 3 ships came.')
    ['It rained.', '"Why?" she asked.', 'Then 3 ships came.']
    """
    return [s for s in _SENTENCE_END.split(line) if s]


def document_sentences(docs: Iterable[Document]) -> List[List[str]]:
    """Every document as its list of sentences."""
    return [[s for line in doc for s in split_sentences(line)] for doc in docs]
