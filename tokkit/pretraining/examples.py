"""BERT pretraining examples from tokenized documents: NSP pairs and RoBERTa FULL-SENTENCES blocks.

`nsp_examples` follows Google's create_pretraining_data: segments (sentences) accumulate up to a
target length (10% of the time a shorter random target), split at a random point into A and B;
half of the time B is replaced by a run of segments from another document of the same group
(label 1), otherwise B is the true continuation (label 0, the convention of Hugging Face's
`next_sentence_label`). The pair is trimmed like `truncate_seq_pair`: the longer side loses a
token from a random end until it fits.

`Packer` builds FULL-SENTENCES blocks: documents are concatenated with [SEP] between them and cut
into blocks of exactly `max_length` ([CLS] + content + [SEP]).

>>> packer = Packer(max_length=6, cls_id=1, sep_id=2)
>>> packer.add([10, 11, 12]); packer.add([13, 14])
>>> [e["input_ids"].tolist() for e in packer.ready()]
[[1, 10, 11, 12, 2, 2]]
>>> [e["input_ids"].tolist() for e in packer.flush()]
[[1, 13, 14, 2]]
"""
from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

Example = Dict[str, np.ndarray]
SHORT_SEQ_PROB = 0.1


def make_example(cls_id: int, sep_id: int, a: Sequence[int], b: Sequence[int] | None = None,
                 label: int | None = None) -> Example:
    """[CLS] a [SEP] (b [SEP]) as numpy arrays, with segment ids and the special-token mask."""
    n_a = len(a) + 2
    n = n_a + (len(b) + 1 if b is not None else 0)
    ids = np.empty(n, dtype=np.int32)
    ids[0] = cls_id
    ids[1:n_a - 1] = a
    ids[n_a - 1] = sep_id
    types = np.zeros(n, dtype=np.int8)
    special = np.zeros(n, dtype=np.int8)
    special[[0, n_a - 1, n - 1]] = 1
    if b is not None:
        ids[n_a:n - 1] = b
        ids[n - 1] = sep_id
        types[n_a:] = 1
    out = {"input_ids": ids, "token_type_ids": types, "special_tokens_mask": special}
    if label is not None:
        out["next_sentence_label"] = np.int64(label)
    return out


def truncate_pair(a: List[int], b: List[int], max_tokens: int, rng: np.random.Generator):
    """Trim (a, b) to `max_tokens` in total: the longer side loses one token at a time from a random end."""
    excess = len(a) + len(b) - max_tokens
    if excess <= 0:
        return a, b
    a_lo, a_hi, b_lo, b_hi = 0, len(a), 0, len(b)
    for front in rng.random(excess) < 0.5:
        if a_hi - a_lo > b_hi - b_lo:
            if front:
                a_lo += 1
            else:
                a_hi -= 1
        elif front:
            b_lo += 1
        else:
            b_hi -= 1
    return a[a_lo:a_hi], b[b_lo:b_hi]


def _concat(segments: Sequence[Sequence[int]]) -> List[int]:
    return [t for s in segments for t in s]


def nsp_examples(docs: Sequence[Sequence[Sequence[int]]], *, rng: np.random.Generator, max_length: int,
                 cls_id: int, sep_id: int) -> Iterator[Example]:
    """NSP examples from documents given as lists of tokenized segments (one group of documents)."""
    docs = [[s for s in doc if len(s)] for doc in docs]
    usable = [d for d, doc in enumerate(docs) if doc]  # each example's `document` is its A's number here
    max_tokens = max_length - 3
    for d in usable:
        segs = docs[d]
        others = [o for o in usable if o != d]
        target = max_tokens
        if rng.random() < SHORT_SEQ_PROB:
            target = int(rng.integers(2, max_tokens + 1))
        chunk: List[Sequence[int]] = []
        length = 0
        i = 0
        while i < len(segs):
            chunk.append(segs[i])
            length += len(segs[i])
            if i == len(segs) - 1 or length >= target:
                is_random = bool(rng.random() < 0.5)
                if not is_random and len(chunk) == 1 and len(chunk[0]) < 2:
                    is_random = True  # nothing to split into A and B
                if is_random and not others:
                    is_random = False  # a group of one document: only true continuations exist
                example = None
                if is_random:
                    a_end = int(rng.integers(1, len(chunk))) if len(chunk) >= 2 else 1
                    a = _concat(chunk[:a_end])
                    other = docs[others[int(rng.integers(len(others)))]]
                    start = int(rng.integers(len(other)))
                    b: List[int] = []
                    for seg in other[start:]:
                        b.extend(seg)
                        if len(b) >= max(1, target - len(a)):
                            break
                    i -= len(chunk) - a_end  # the unused segments start the next chunk
                    example = (a, b, 1)
                elif len(chunk) >= 2:
                    a_end = int(rng.integers(1, len(chunk)))
                    example = (_concat(chunk[:a_end]), _concat(chunk[a_end:]), 0)
                elif len(chunk[0]) >= 2:
                    cut = int(rng.integers(1, len(chunk[0])))  # one long segment: split it
                    example = (list(chunk[0][:cut]), list(chunk[0][cut:]), 0)
                if example is not None:
                    a, b, label = example
                    a, b = truncate_pair(a, b, max_tokens, rng)
                    example = make_example(cls_id, sep_id, a, b, label)
                    example["document"] = np.int64(d)
                    yield example
                chunk, length = [], 0
            i += 1


class Packer:
    """Concatenate documents with [SEP] between them and cut the stream into full blocks.

    A document added with `document=n` makes each block that starts inside it carry
    `"document": n` (the shuffle buffer spreads a document's blocks apart by it).
    """

    def __init__(self, *, max_length: int, cls_id: int, sep_id: int):
        self.content = max_length - 2
        self.cls_id = cls_id
        self.sep_id = sep_id
        self.buffer: List[int] = []
        self.start = 0  # tokens before it are already emitted (dropped in bulk, not per block)
        self.boundary: List[int] = []  # positions in buffer of the [SEP]s between documents
        self.starts: List[Tuple[int, int]] = []  # (position in buffer, document) where each document begins

    def __len__(self) -> int:
        return len(self.buffer) - self.start

    def add(self, ids: Sequence[int], document: Optional[int] = None) -> None:
        if not len(ids):
            return
        if len(self):
            self.boundary.append(len(self.buffer))
            self.buffer.append(self.sep_id)
        if document is not None:
            self.starts.append((len(self.buffer), int(document)))
        self.buffer.extend(ids)

    def _emit(self, n: int) -> Example:
        lo = self.start
        example = make_example(self.cls_id, self.sep_id, self.buffer[lo:lo + n])
        for pos in self.boundary:
            if lo <= pos < lo + n:
                example["special_tokens_mask"][pos - lo + 1] = 1
        while len(self.starts) > 1 and self.starts[1][0] <= lo:
            del self.starts[0]  # documents that ended before this block
        if self.starts and self.starts[0][0] <= lo:
            example["document"] = np.int64(self.starts[0][1])
        end = lo + n
        if end < len(self.buffer) and end in self.boundary:
            end += 1  # a block never starts with the [SEP] that separated two documents
        self.boundary = [p for p in self.boundary if p >= end]
        self.start = end
        if self.start > 4096 and self.start * 2 > len(self.buffer):
            del self.buffer[:self.start]  # amortised: a long document is not shifted once per block
            self.boundary = [p - self.start for p in self.boundary]
            self.starts = [(p - self.start, d) for p, d in self.starts]
            self.start = 0
        return example

    def ready(self) -> Iterator[Example]:
        """Every full block available now."""
        while len(self) >= self.content:
            yield self._emit(self.content)

    def flush(self) -> Iterator[Example]:
        """The last, shorter block (the only one that will need padding)."""
        if len(self):
            yield self._emit(len(self))
