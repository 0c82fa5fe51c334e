"""Batches for the pretraining loop: a resumable stream over tokkit's examples, and a fixed eval set.

Examples come from tokkit.pretraining (`full` or `nsp` examples from text, or shards written by
`tokkit encode --pretraining`); masking is dynamic and keyed by (seed, epoch, example index) in the
collator, so a stream that skips to a saved position yields exactly the batches it would have.

>>> stream = BatchStream(tok, ["corpus.txt"], kind="full", batch_size=32, max_length=128, seed=0)  # doctest: +SKIP
>>> batch = next(stream); stream.position                                                            # doctest: +SKIP
{'epoch': 0, 'examples': 32}
"""
from __future__ import annotations

import itertools
import os
from typing import Iterator, Optional, Sequence

from tokkit import pretraining
from tokkit.errors import TokkitError
from tokkit.labelled.rows import Fields
from tokkit.pretraining.collate import special_token_ids
from tokkit.pretraining.shuffle import DEFAULT_BUFFER


def check_tokenizer(tokenizer) -> dict[str, int]:
    """Ids of the special tokens BERT pretraining needs; a clear error when one is absent."""

    return special_token_ids(tokenizer)


def make_dataset(tokenizer, paths: Sequence, *, kind: str, max_length: int, seed: int,
                 rank: int = 0, world_size: int = 1, shuffle: bool = True, buffer_size: int = DEFAULT_BUFFER,
                 fields: Fields = Fields()):
    """tokkit.pretraining's dataset over text and labelled files, or over one shard folder (shuffled by default)."""

    paths = [os.fspath(p) for p in paths]
    for p in paths:
        if not os.path.exists(p):
            raise TokkitError(f"{p}: no such file or folder")
    if len(paths) == 1 and pretraining.is_shard_dir(paths[0]):
        return pretraining.ShardDataset(paths[0], rank=rank, world_size=world_size, shuffle=shuffle,
                                        buffer_size=buffer_size, seed=seed)
    return pretraining.PretrainingDataset(tokenizer, paths, kind=kind, max_length=max_length, seed=seed,
                                          rank=rank, world_size=world_size, shuffle=shuffle, buffer_size=buffer_size,
                                          fields=fields)


def make_collator(tokenizer, *, seed: int, mlm_probability: float = 0.15, whole_word: bool = False):
    """The masking collator; `whole_word` chooses words, every sub-token of a chosen word labelled."""
    return pretraining.MaskingCollator(tokenizer, seed=seed, mlm_probability=mlm_probability,
                                       whole_word=whole_word, return_tensors="pt")


_KEYS = ("input_ids", "token_type_ids", "attention_mask", "labels", "next_sentence_label")


def _select(batch) -> dict:
    return {k: batch[k] for k in _KEYS if k in batch and batch[k] is not None}


class BatchStream:
    """Endless masked batches, epoch after epoch; `position` / `seek` make it resumable.

    A batch never straddles two epochs (a short tail is dropped), so the position is simply
    (epoch, examples read in that epoch).
    """

    def __init__(self, dataset, collator, batch_size: int):
        self.dataset = dataset
        self.collator = collator
        self.batch_size = batch_size
        self.epoch = 0
        self.examples = 0
        self._it: Optional[Iterator] = None

    @property
    def position(self) -> dict:
        return {"epoch": self.epoch, "examples": self.examples}

    def seek(self, position: dict) -> None:
        """Continue from a saved position: re-read the epoch's examples up to it (cheap next to training)."""
        self.epoch = int(position.get("epoch", 0))
        self.examples = 0
        self._start_epoch()
        skip = int(position.get("examples", 0))
        if skip:
            self._it = itertools.islice(self._it, skip, None)
            self.examples = skip

    def _start_epoch(self) -> None:
        if hasattr(self.collator, "set_epoch"):
            self.collator.set_epoch(self.epoch)
        if hasattr(self.dataset, "set_epoch"):
            self.dataset.set_epoch(self.epoch)
        self._it = iter(self.dataset)

    def __iter__(self):
        return self

    def __next__(self) -> dict:
        if self._it is None:
            self._start_epoch()
        for _attempt in range(2):
            chunk = list(itertools.islice(self._it, self.batch_size))
            if len(chunk) == self.batch_size:
                self.examples += len(chunk)
                return _select(self.collator(chunk))
            if not chunk and self.examples == 0:
                break
            self.epoch += 1
            self.examples = 0
            self._start_epoch()
        raise TokkitError("the corpus yields fewer examples than one batch; use more text or a smaller --batch-size")


def eval_batches(tokenizer, path, *, blocks: int, max_length: int, batch_size: int, seed: int = 1234,
                 mlm_probability: float = 0.15, fields: Fields = Fields()) -> list[dict]:
    """The held-out set: the first `blocks` full-sentence examples of `path` in file order, masked once
    with a fixed seed."""
    dataset = make_dataset(tokenizer, [path], kind="full", max_length=max_length, seed=seed, shuffle=False,
                           fields=fields)
    collator = make_collator(tokenizer, seed=seed, mlm_probability=mlm_probability)
    examples = list(itertools.islice(iter(dataset), blocks))
    if not examples:
        raise TokkitError(f"{path}: evaluation text yields no examples")
    return [_select(collator(examples[i:i + batch_size])) for i in range(0, len(examples), batch_size)]



class MaskRates:
    """Change a MaskingCollator's masking rate between batches (for a schedule such as 30% -> 15%).

    Rates are rounded to half a percentage point, so a schedule reuses a handful of masking tables.

    >>> rates = MaskRates(tok, collator, 0.3); rates.set(0.25)   # doctest: +SKIP
    """

    def __init__(self, tokenizer, collator, rate: float):
        self.tokenizer = tokenizer
        self.collator = collator
        self.rate = float(rate)
        self._specs = {round(self.rate * 200): collator.spec}

    def set(self, rate: float) -> None:
        key = round(rate * 200)
        if key not in self._specs:
            self._specs[key] = make_collator(self.tokenizer, seed=0, mlm_probability=key / 200).spec
        self.collator.spec = self._specs[key]
        self.rate = key / 200
