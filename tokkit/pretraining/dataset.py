"""BERT pretraining data: NSP or full-sentence examples streamed from text, and their datasets.

Work is shared out by groups of documents (see tokkit.pretraining.documents.iter_groups): group g
belongs to share g % shares, where shares = world_size x DataLoader workers and share =
rank x workers + worker id. Each worker reads the text but tokenizes only its own groups, so no
example appears twice, and an example's content and global `index` (g * 2**32 + its rank in the
group) are the same whatever the number of workers or ranks. Masking happens later, in
`MaskingCollator`, keyed by (seed, epoch, index).

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
from typing import Callable, Iterator, List, Optional, Tuple

import numpy as np

from tokkit.errors import TokkitError
from tokkit.pretraining.collate import special_token_ids
from tokkit.pretraining.documents import document_sentences, expand_paths, iter_groups
from tokkit.pretraining.examples import Example, Packer, nsp_examples

__all__ = ["iter_examples", "PretrainingDataset", "worker_share", "check_kind", "KINDS"]

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


def iter_examples(tokenizer, paths, *, kind: str, max_length: int = 128, seed: int = 0, share: int = 0,
                  shares: int = 1, threads: Optional[int] = None,
                  on_text: Optional[Callable[[int], None]] = None) -> Iterator[Example]:
    """Stream the examples of share `share` out of `shares`, each with its global `index`.

    Memory holds one group of documents (and, for `full`, the next group while its first
    documents complete the last block). NSP randomness is seeded by (seed, group).
    `on_text(n)` is told of the characters of each group read (for a progress bar).
    """
    check_kind(kind, max_length)
    if not 0 <= share < shares:
        raise TokkitError(f"share {share} is outside [0, {shares})")
    ids = special_token_ids(tokenizer)
    cls_id, sep_id = ids["[CLS]"], ids["[SEP]"]
    groups = iter_groups(paths)
    pending: deque = deque()  # groups read ahead while completing a `full` block

    def next_group():
        return pending.popleft() if pending else next(groups, None)

    while True:
        item = next_group()
        if item is None:
            return
        g, docs = item
        if on_text is not None:
            on_text(sum(len(line) + 1 for doc in docs for line in doc))
        if g % shares != share:
            continue
        base = g * GROUP_STRIDE
        if kind == "nsp":
            rng = np.random.default_rng([seed, g])
            token_docs = _tokenize_sentences(tokenizer, docs, threads)
            stream = nsp_examples(token_docs, rng=rng, max_length=max_length, cls_id=cls_id, sep_id=sep_id)
        else:
            stream = _full_group(tokenizer, docs, pending, groups, max_length, cls_id, sep_id, threads)
        for k, example in enumerate(stream):
            example["index"] = np.int64(base + k)
            yield example


def _full_group(tokenizer, docs, pending, groups, max_length, cls_id, sep_id, threads) -> Iterator[Example]:
    packer = Packer(max_length=max_length, cls_id=cls_id, sep_id=sep_id)
    for doc_ids in _tokenize_docs(tokenizer, docs, threads):
        packer.add(doc_ids)
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
        for doc in pending[k][1]:
            packer.add(_tokenize_docs(tokenizer, [doc], threads)[0])
            for block in packer.ready():
                yield block
                return
        k += 1


class PretrainingDataset:
    """Iterable of NSP or full-sentence examples read from text files (see the module docstring).

    Picklable (it holds the tokenizer and the paths, no open file); each iteration reads the
    corpus afresh, so it can serve epoch after epoch.
    """

    def __init__(self, tokenizer, paths, *, kind: str, max_length: int = 128, seed: int = 0,
                 rank: int = 0, world_size: int = 1):
        check_kind(kind, max_length)
        if not 0 <= rank < world_size:
            raise TokkitError(f"rank {rank} is outside [0, world_size={world_size})")
        special_token_ids(tokenizer)  # fail now, not in a worker, when [CLS]/[SEP]/[MASK] are missing
        self.tokenizer = tokenizer
        self.paths = [str(p) for p in expand_paths(paths)]
        self.kind = kind
        self.max_length = int(max_length)
        self.seed = int(seed)
        self.rank = int(rank)
        self.world_size = int(world_size)

    def __iter__(self) -> Iterator[Example]:
        share, shares, in_worker = worker_share(self.rank, self.world_size)
        # One encode thread per DataLoader worker: the workers already fill the cores.
        return iter_examples(self.tokenizer, self.paths, kind=self.kind, max_length=self.max_length,
                             seed=self.seed, share=share, shares=shares, threads=1 if in_worker else None)

    def as_torch_dataset(self):
        """This dataset as a `torch.utils.data.IterableDataset` (imports torch)."""
        from tokkit.pretraining.torch_bridge import TorchIterable

        return TorchIterable(self)

