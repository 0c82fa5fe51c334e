"""BERT pretraining data: NSP or full-sentence examples streamed from text, and their datasets.

By default (`shuffle=True`) each epoch visits the documents in a seeded random order across all
files (tokkit.pretraining.corpus_index), and the examples pass through a shuffle buffer that
spreads every document's examples apart (tokkit.pretraining.shuffle), so a batch of 32 draws on
about 32 documents. `shuffle=False` streams the files in order, document after document.

Work is shared out by groups of documents: runs of up to 64 documents (or 1 MB) of the epoch's
order (see tokkit.pretraining.documents.iter_groups for file order). Group g belongs to share
g % shares, where shares = world_size x DataLoader workers and share = rank x workers + worker id.
Each share tokenizes only its own groups, so no example appears twice and none is lost, and an
example's content and global `index` (g * 2**32 + its rank in the group) are the same whatever
the number of workers or ranks; only the order within a share depends on them. Masking happens
later, in `MaskingCollator`, keyed by (seed, epoch, index).

A `full` block never stops at a group's end: the group's last block is completed with the first
documents of the next group, so only the corpus' very last block is short (needs padding).

The datasets are plain iterables and importing this module never imports torch; for a
`torch.utils.data.DataLoader` wrap one with `as_torch_dataset()`.

>>> ds = PretrainingDataset(tok, ["corpus.txt"], kind="full", max_length=128)   # doctest: +SKIP
>>> loader = DataLoader(ds.as_torch_dataset(), batch_size=32, num_workers=2,      # doctest: +SKIP
...                     collate_fn=MaskingCollator(tok, return_tensors="pt"))
"""
from __future__ import annotations

import sys
from collections import deque
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from tokkit.errors import TokkitError
from tokkit.labelled.files import is_labelled_file
from tokkit.labelled.rows import Fields
from tokkit.pretraining.collate import special_token_ids
from tokkit.pretraining.corpus_index import DocumentIndex, DocumentReader, epoch_order, order_groups
from tokkit.pretraining.documents import document_sentences, expand_paths, iter_groups, labelled_documents
from tokkit.pretraining.examples import Example, Packer, nsp_examples
from tokkit.pretraining.shuffle import DEFAULT_BUFFER, spread

__all__ = ["iter_examples", "iter_shuffled_examples", "PretrainingDataset", "worker_share", "check_kind", "KINDS",
           "labelled_lengths"]

KINDS = ("nsp", "full")
GROUP_STRIDE = 1 << 32  # index = group * GROUP_STRIDE + position of the example in its group


def worker_share(rank: int = 0, world_size: int = 1) -> Tuple[int, int, bool]:
    """(share, shares, in_worker) for the calling process: its rank combined with its DataLoader worker."""
    worker, workers = 0, 1
    torch = sys.modules.get("torch")  # never import torch here: only ask if it is already in use
    info = torch.utils.data.get_worker_info() if torch is not None else None
    if info is not None:
        worker, workers = info.id, info.num_workers
    return rank * workers + worker, world_size * workers, info is not None


def check_kind(kind: str, max_length: int) -> None:
    if kind not in KINDS:
        raise TokkitError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if int(max_length) < 5:
        raise TokkitError(f"max_length must be at least 5 ([CLS] A [SEP] B [SEP]), got {max_length}")


def _encode_lines(tokenizer, lines: List[str], threads: Optional[int]) -> List[List[int]]:
    return tokenizer.encode_batch(lines, num_threads=threads) if lines else []


def _tokenize_docs(tokenizer, docs, threads) -> List[List[int]]:
    """Each document as one token list (its lines' tokens, concatenated)."""
    lines = [line for doc in docs for line in doc]
    encoded = _encode_lines(tokenizer, lines, threads)
    out, k = [], 0
    for doc in docs:
        out.append([t for ids in encoded[k:k + len(doc)] for t in ids])
        k += len(doc)
    return out


def _tokenize_sentences(tokenizer, docs, threads) -> List[List[List[int]]]:
    sentences = document_sentences(docs)
    encoded = _encode_lines(tokenizer, [s for doc in sentences for s in doc], threads)
    out, k = [], 0
    for doc in sentences:
        out.append(encoded[k:k + len(doc)])
        k += len(doc)
    return out


def labelled_lengths(tokenizer, paths, fields: Fields = Fields()) -> List[int]:
    """The token count of every document (row) of the corpus' labelled files; [] when it holds none."""
    docs = [doc for path in expand_paths(paths) if is_labelled_file(path) for doc in labelled_documents(path, fields)]
    return [len(ids) for ids in _tokenize_docs(tokenizer, docs, None)]


class _Group:
    """One group of documents: its number, the corpus numbers of its documents, their text read on demand."""

    def __init__(self, number: int, doc_ids: Sequence[int], read: Callable[[int], List[str]]):
        self.number = number
        self.doc_ids = [int(d) for d in doc_ids]
        self._read = read
        self._docs: dict = {}

    def __len__(self) -> int:
        return len(self.doc_ids)

    def doc(self, i: int) -> List[str]:
        if i not in self._docs:
            self._docs[i] = self._read(i)
        return self._docs[i]

    def docs(self) -> List[List[str]]:
        return [self.doc(i) for i in range(len(self))]


def iter_examples(tokenizer, paths, *, kind: str, max_length: int = 128, seed: int = 0, share: int = 0,
                  shares: int = 1, threads: Optional[int] = None,
                  on_text: Optional[Callable[[int], None]] = None, fields: Fields = Fields()) -> Iterator[Example]:
    """Stream the examples of share `share` out of `shares` in file order, each with its global `index`.

    Memory holds one group of documents (and, for `full`, the next group while its first
    documents complete the last block). NSP randomness is seeded by (seed, group).
    `on_text(n)` is told of the characters of each group read (for a progress bar). `fields`
    names the text fields of labelled files.
    """
    check_kind(kind, max_length)

    def groups() -> Iterator[_Group]:
        first = 0
        for g, docs in iter_groups(paths, fields):
            yield _Group(g, range(first, first + len(docs)), docs.__getitem__)
            first += len(docs)

    return _examples(tokenizer, groups(), kind=kind, max_length=max_length, share=share, shares=shares,
                     threads=threads, on_text=on_text, nsp_rng=lambda g: np.random.default_rng([seed, g]))


def iter_shuffled_examples(tokenizer, index: DocumentIndex, *, kind: str, max_length: int = 128, seed: int = 0,
                           epoch: int = 0, share: int = 0, shares: int = 1, buffer_size: int = DEFAULT_BUFFER,
                           threads: Optional[int] = None,
                           on_text: Optional[Callable[[int], None]] = None) -> Iterator[Example]:
    """The examples of share `share` for epoch `epoch`: documents in the epoch's shuffled order
    (corpus_index.epoch_order), cut into groups as in file order, then through the shuffle buffer.

    Example contents and indices do not depend on `shares`; only the order within a share does.
    Each example's `document` is the corpus number of the document its first token comes from.
    """
    check_kind(kind, max_length)
    reader = DocumentReader(index)
    order = epoch_order(index, seed=seed, epoch=epoch)

    def groups() -> Iterator[_Group]:
        for g, ids in enumerate(order_groups(index, order)):
            yield _Group(g, ids, lambda i, ids=ids: reader.read(int(ids[i])))

    stream = _examples(tokenizer, groups(), kind=kind, max_length=max_length, share=share, shares=shares,
                       threads=threads, on_text=on_text,
                       nsp_rng=lambda g: np.random.default_rng([seed, epoch, g]))
    with reader:
        yield from spread(stream, size=buffer_size, rng=np.random.default_rng([seed, epoch, shares, share]))


def _examples(tokenizer, groups: Iterator[_Group], *, kind: str, max_length: int, share: int, shares: int,
              threads: Optional[int], on_text, nsp_rng) -> Iterator[Example]:
    """The examples of this share's groups (g % shares == share), numbered g * GROUP_STRIDE + k."""
    if not 0 <= share < shares:
        raise TokkitError(f"share {share} is outside [0, {shares})")
    ids = special_token_ids(tokenizer)
    cls_id, sep_id = ids["[CLS]"], ids["[SEP]"]
    pending: deque = deque()  # groups read ahead while completing a `full` block

    while True:
        group = pending.popleft() if pending else next(groups, None)
        if group is None:
            return
        if group.number % shares != share:
            continue
        docs = group.docs()
        if on_text is not None:
            on_text(sum(len(line) + 1 for doc in docs for line in doc))
        if kind == "nsp":
            token_docs = _tokenize_sentences(tokenizer, docs, threads)
            stream = nsp_examples(token_docs, rng=nsp_rng(group.number), max_length=max_length, cls_id=cls_id,
                                  sep_id=sep_id)
        else:
            stream = _full_group(tokenizer, group, pending, groups, max_length, cls_id, sep_id, threads)
        base = group.number * GROUP_STRIDE
        for k, example in enumerate(stream):
            example["index"] = np.int64(base + k)
            if kind == "nsp":  # nsp_examples numbers documents within the group
                example["document"] = np.int64(group.doc_ids[int(example["document"])])
            yield example


def _full_group(tokenizer, group: _Group, pending, groups, max_length, cls_id, sep_id, threads) -> Iterator[Example]:
    packer = Packer(max_length=max_length, cls_id=cls_id, sep_id=sep_id)
    for doc_id, doc_ids in zip(group.doc_ids, _tokenize_docs(tokenizer, group.docs(), threads)):
        packer.add(doc_ids, document=doc_id)
        yield from packer.ready()
    if not len(packer):
        return
    # Complete the last block with the documents that follow, reading ahead group by group.
    k = 0
    while True:
        if k == len(pending):
            item = next(groups, None)
            if item is None:
                yield from packer.flush()
                return
            pending.append(item)
        following = pending[k]
        for i in range(len(following)):
            packer.add(_tokenize_docs(tokenizer, [following.doc(i)], threads)[0], document=following.doc_ids[i])
            for block in packer.ready():
                yield block
                return
        k += 1


class PretrainingDataset:
    """Iterable of NSP or full-sentence examples read from text files (see the module docstring).

    `shuffle=True` (the default): each epoch visits the documents in a new seeded order across all
    files and passes the examples through a shuffle buffer of `buffer_size` examples
    (tokkit.pretraining.shuffle); call `set_epoch(e)` before iterating epoch e (as with torch's
    DistributedSampler; with `persistent_workers` the workers keep the epoch they started with).
    The corpus is read once here to find its documents. `shuffle=False` streams the files in order.
    `fields` names the text fields read from labelled files (tokkit.pretraining.documents).

    Picklable (it holds the tokenizer, the paths and the document index, no open file); each
    iteration reads the corpus afresh, so it can serve epoch after epoch.
    """

    def __init__(self, tokenizer, paths, *, kind: str, max_length: int = 128, seed: int = 0,
                 rank: int = 0, world_size: int = 1, shuffle: bool = True, buffer_size: int = DEFAULT_BUFFER,
                 fields: Fields = Fields()):
        check_kind(kind, max_length)
        if not 0 <= rank < world_size:
            raise TokkitError(f"rank {rank} is outside [0, world_size={world_size})")
        check_buffer_size(buffer_size)
        special_token_ids(tokenizer)  # fail now, not in a worker, when [CLS]/[SEP]/[MASK] are missing
        self.tokenizer = tokenizer
        self.paths = [str(p) for p in expand_paths(paths)]
        self.kind = kind
        self.max_length = int(max_length)
        self.seed = int(seed)
        self.rank = int(rank)
        self.world_size = int(world_size)
        self.shuffle = bool(shuffle)
        self.buffer_size = int(buffer_size)
        self.epoch = 0
        self.fields = fields
        self.index = DocumentIndex.build(self.paths, fields) if self.shuffle else None

    def set_epoch(self, epoch: int) -> None:
        """Iterate epoch `epoch` next: its document order and buffer order (a no-op without shuffle)."""
        self.epoch = int(epoch)

    def __iter__(self) -> Iterator[Example]:
        share, shares, in_worker = worker_share(self.rank, self.world_size)
        # One encode thread per DataLoader worker: the workers already fill the cores.
        options = dict(kind=self.kind, max_length=self.max_length, seed=self.seed, share=share, shares=shares,
                       threads=1 if in_worker else None)
        if self.index is None:
            return iter_examples(self.tokenizer, self.paths, fields=self.fields, **options)
        return iter_shuffled_examples(self.tokenizer, self.index, epoch=self.epoch, buffer_size=self.buffer_size,
                                      **options)

    def as_torch_dataset(self):
        """This dataset as a `torch.utils.data.IterableDataset` (imports torch)."""
        from tokkit.pretraining.torch_bridge import TorchIterable

        return TorchIterable(self)


def check_buffer_size(buffer_size) -> None:
    if isinstance(buffer_size, bool) or not isinstance(buffer_size, (int, np.integer)) or buffer_size < 0:
        raise TokkitError(f"buffer_size must be a whole number >= 0, got {buffer_size!r}")
