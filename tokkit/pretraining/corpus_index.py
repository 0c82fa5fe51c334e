"""Where every document of a corpus lies, and the order an epoch visits them in.

`DocumentIndex.build(paths)` reads the corpus once and records each document's file and byte span
(tokkit.pretraining.documents.file_spans; a labelled file's documents are numbered, not spanned, and
a reader keeps that file's texts once it has read them). An epoch's order (`epoch_order`) is then a seeded random
permutation of all documents across all files, and `DocumentReader` fetches documents in that order
by seeking to their spans, so memory never holds more than the documents being tokenized.

A compressed file cannot be read at a random place: its documents keep their file order, and the
epoch interleaves them at random positions among the others (for plain files alone the order is a
uniform permutation). `DocumentReader` keeps one decompressor open per compressed file.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "c.txt")
>>> _ = open(path, "w").write("One\\n\\nA first doc.\\nIts end.\\n\\nSecond doc.\\nMore.\\n\\nThird.\\nLast.\\n")
>>> index = DocumentIndex.build([path])
>>> len(index), sorted(epoch_order(index, seed=0, epoch=0).tolist())
(3, [0, 1, 2])
>>> DocumentReader(index).read(1)
['Second doc.', 'More.']
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterator, List, Sequence, Tuple

import numpy as np

from tokkit.errors import TokkitError
from tokkit.labelled.files import is_labelled_file
from tokkit.labelled.rows import Fields
from tokkit.pretraining.documents import (GROUP_CHARS, GROUP_DOCUMENTS, Document, _file_documents, expand_paths,
                                          file_spans, labelled_documents, read_span)
from tokkit.text.corpus import Source

MAX_OPEN_FILES = 64  # plain files kept open by a reader; compressed ones are never closed mid-epoch


@dataclass(frozen=True)
class DocumentIndex:
    """The documents of a corpus: per document its file number and byte span (decompressed bytes
    for a compressed file)."""

    paths: Tuple[str, ...]
    compressed: Tuple[bool, ...]
    file: np.ndarray   # (D,) int32
    start: np.ndarray  # (D,) int64
    end: np.ndarray    # (D,) int64
    fields: Fields = Fields()  # the text fields of labelled files

    @classmethod
    def build(cls, paths, fields: Fields = Fields()) -> "DocumentIndex":
        """Read every file once and record its documents (a folder stands for its sorted files)."""
        files = [str(p) for p in expand_paths(paths)]
        spans = [(f, start, end) for f, path in enumerate(files) for start, end, _doc in file_spans(path, fields)]
        if not spans:
            raise TokkitError("the corpus yields no examples: it holds no documents (are its files empty?)")
        file, start, end = (np.asarray(column, np.int64) for column in zip(*spans))
        return cls(tuple(files), tuple(Source(p).compressed for p in files), file.astype(np.int32), start, end,
                   fields)

    def __len__(self) -> int:
        return len(self.file)

    def number_in_file(self, doc: int) -> int:
        """The document's position within its file (how a compressed file is read)."""
        return doc - int(np.searchsorted(self.file, self.file[doc]))


def epoch_order(index: DocumentIndex, *, seed: int, epoch: int) -> np.ndarray:
    """The documents (numbers into `index`) in the order epoch `epoch` visits them.

    A random interleaving of the files' document sequences, where a plain file's sequence is a
    random permutation of its documents and a compressed file's is its own order: for plain files
    this is a uniform random permutation of the whole corpus.
    """
    rng = np.random.default_rng([seed, epoch])
    n = len(index)
    plain = ~np.asarray(index.compressed, dtype=bool)[index.file]
    key = np.where(plain, rng.random(n), np.arange(n) / max(n, 1))  # compressed: keep file order
    within = np.lexsort((key, index.file))            # documents grouped by file, in visiting order
    slots = np.argsort(rng.permutation(index.file), kind="stable")  # positions each file's turn falls on
    order = np.empty(n, dtype=np.int64)
    order[slots] = within
    return order


def order_groups(index: DocumentIndex, order: np.ndarray) -> List[np.ndarray]:
    """`order` cut into runs of at most GROUP_DOCUMENTS documents or GROUP_CHARS bytes."""
    groups, start, size = [], 0, 0
    for k, doc in enumerate(order.tolist()):
        size += int(index.end[doc] - index.start[doc])
        if k + 1 - start >= GROUP_DOCUMENTS or size >= GROUP_CHARS:
            groups.append(order[start:k + 1])
            start, size = k + 1, 0
    if start < len(order):
        groups.append(order[start:])
    return groups


class DocumentReader:
    """Reads documents of an index by number: a seek for plain files, in file order for compressed ones."""

    def __init__(self, index: DocumentIndex):
        self.index = index
        self._plain: "OrderedDict[int, object]" = OrderedDict()
        self._compressed: dict = {}  # file -> (next document number, iterator)
        self._labelled: dict = {}  # file -> its documents, read whole on first use

    def read(self, doc: int) -> Document:
        f = int(self.index.file[doc])
        if is_labelled_file(self.index.paths[f]):
            return self._read_labelled(f, int(self.index.start[doc]))
        if self.index.compressed[f]:
            return self._read_compressed(f, self.index.number_in_file(doc))
        fh = self._open(f)
        start, end = int(self.index.start[doc]), int(self.index.end[doc])
        fh.seek(start)
        data = fh.read(end - start)
        if len(data) != end - start:
            raise TokkitError(f"{self.index.paths[f]}: file changed while training (shorter than indexed)")
        try:
            return read_span(data)
        except UnicodeDecodeError as exc:
            raise TokkitError(f"{self.index.paths[f]}: not UTF-8 text ({exc.reason} at byte "
                              f"{start + exc.start})") from None

    def read_many(self, docs: Sequence[int]) -> List[Document]:
        return [self.read(int(d)) for d in docs]

    def _open(self, f: int):
        fh = self._plain.pop(f, None)
        if fh is None:
            try:
                fh = open(self.index.paths[f], "rb")
            except OSError as exc:
                raise TokkitError(f"{self.index.paths[f]}: cannot read ({exc.strerror or exc})") from None
            if len(self._plain) >= MAX_OPEN_FILES:
                self._plain.popitem(last=False)[1].close()
        self._plain[f] = fh
        return fh

    def _read_labelled(self, f: int, number: int) -> Document:
        if f not in self._labelled:
            self._labelled[f] = labelled_documents(self.index.paths[f], self.index.fields)
        docs = self._labelled[f]
        if number >= len(docs):
            raise TokkitError(f"{self.index.paths[f]}: file changed while training (fewer rows than indexed)")
        return docs[number]

    def _read_compressed(self, f: int, number: int) -> Document:
        at, docs = self._compressed.get(f, (0, None))
        if docs is None or number < at:  # the first visit this epoch, or a new epoch: start again
            at, docs = 0, _file_documents(self.index.paths[f], self.index.fields)
        for doc in docs:
            if at == number:
                self._compressed[f] = (at + 1, docs)
                return doc
            at += 1
        raise TokkitError(f"{self.index.paths[f]}: file changed while training (fewer documents than indexed)")

    def close(self) -> None:
        for fh in self._plain.values():
            fh.close()
        self._plain.clear()
        self._compressed.clear()
        self._labelled.clear()

    def __enter__(self) -> "DocumentReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def iter_order(index: DocumentIndex, order: np.ndarray) -> Iterator[Document]:
    """Every document of `order`, read in that order."""
    with DocumentReader(index) as reader:
        for doc in order.tolist():
            yield reader.read(doc)
