"""MaskingCollator: pad examples into a batch and mask each one by (seed, epoch, example index).

Row r of a batch is masked with the keys drawn from `numpy.random.default_rng([seed, epoch,
index_r])`, exactly as `tokkit.mask_tokens(ids[None], ..., rng=numpy.random.default_rng([seed,
epoch, index]))` would mask that example alone: its mask depends neither on the batch it lands
in, nor on the DataLoader worker or the rank that read it.

>>> collate = MaskingCollator(tok, seed=0)                      # doctest: +SKIP
>>> collate.set_epoch(3)                                        # doctest: +SKIP
>>> batch = collate([example_a, example_b])                     # doctest: +SKIP
>>> sorted(batch)                                               # doctest: +SKIP
['attention_mask', 'index', 'input_ids', 'labels', 'token_type_ids']
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import numpy as np

from tokkit.errors import TokkitError
from tokkit.inputs.masking import MaskSpec, apply_mask, row_keys
from tokkit.tokenizer.models import BPE, WordPiece
from tokkit.tokenizer.pre_tokenizers import ByteLevel, Metaspace

REQUIRED = ("[CLS]", "[SEP]", "[MASK]")


def special_token_ids(tokenizer) -> Dict[str, Optional[int]]:
    """Ids of [CLS], [SEP], [MASK] and [PAD] (None when absent); a clear error without the first three."""
    ids = {t: tokenizer.token_to_id(t) for t in REQUIRED + ("[PAD]",)}
    missing = [t for t in REQUIRED if ids[t] is None]
    if missing:
        raise TokkitError(f"the tokenizer has no {', '.join(missing)}: BERT pretraining needs "
                          f"{', '.join(REQUIRED)} in its vocabulary")
    return ids


def _all_special_ids(tokenizer) -> List[int]:
    ids = [tokenizer.token_to_id(t) for t in getattr(tokenizer, "special_tokens", [])]
    ids += [v for v in special_token_ids(tokenizer).values() if v is not None]
    return sorted({i for i in ids if i is not None})


def word_tables(tokenizer):
    """(starts, ends) uint8 tables over the vocabulary: a token opens / closes a word.

    The convention comes from the tokenizer's own pipeline where it has one (word_rule), else from
    its vocabulary: WordPiece continues a word with `##`, a Metaspace (SentencePiece-style)
    tokenizer opens one with `▁` whatever its model (Unigram or BPE), byte-level BPE opens one with
    `Ġ` (an encoded space), char BPE closes one with `</w>`. Special tokens are words of their own.
    """
    size = int(tokenizer.vocab_size)
    tokens = [tokenizer.id_to_token(i) or "" for i in range(size)]
    kind, mark = word_rule(tokenizer, tokens)
    starts = np.zeros(size, dtype=np.uint8)
    ends = np.zeros(size, dtype=np.uint8)
    if kind == "continues":
        starts[:] = [not t.startswith(mark) for t in tokens]
    elif kind == "starts":
        starts[:] = [t.startswith(mark) for t in tokens]
    elif kind == "ends":
        ends[:] = [t.endswith(mark) for t in tokens]
    else:
        starts[:] = 1
    special = _all_special_ids(tokenizer)
    starts[special] = 1
    ends[special] = 1
    return starts, ends


def word_rule(tokenizer, tokens: Sequence[str]) -> tuple[str, Optional[str]]:
    """How a token shows its place in a word: ("continues", prefix), ("starts", mark), ("ends",
    suffix), or ("each", None) when every token is a word.

    The tokenizer's components decide first: a WordPiece model's continuing prefix; a Metaspace
    pre-tokenizer's replacement (a SentencePiece Unigram or BPE file: pieces are not words, and a
    BPE model has no `</w>` to close one); a ByteLevel pre-tokenizer's `Ġ`; a BPE model's suffix or
    prefix. Without components (another tokenizer object) the vocabulary shows the convention.
    """
    pipeline = getattr(getattr(tokenizer, "spec", None), "pipeline", None)
    if pipeline is not None:
        model, pres = pipeline.model, _pre_tokenizers(pipeline.pre_tokenizer)
        if isinstance(model, WordPiece):
            return "continues", model.continuing_subword_prefix
        for pre in pres:
            if isinstance(pre, Metaspace):
                return "starts", pre.replacement
        if any(isinstance(pre, ByteLevel) for pre in pres):
            return "starts", "\u0120"
        if isinstance(model, BPE) and model.end_of_word_suffix:
            return "ends", model.end_of_word_suffix
        if isinstance(model, BPE) and model.continuing_subword_prefix:
            return "continues", model.continuing_subword_prefix
    for kind, mark, found in (("continues", "##", lambda t: t.startswith("##")),
                              ("ends", "</w>", lambda t: t.endswith("</w>")),
                              ("starts", "\u0120", lambda t: t.startswith("\u0120")),
                              ("starts", "\u2581", lambda t: t.startswith("\u2581"))):  # normalizer-made ▁
        if any(found(t) for t in tokens):
            return kind, mark
    return "each", None


def _pre_tokenizers(pre) -> list:
    """The pre-tokenizers of a pipeline, Sequences opened."""
    if pre is None:
        return []
    inner = getattr(pre, "pretokenizers", None)
    if inner is not None:
        return [p for q in inner for p in _pre_tokenizers(q)]
    return [pre]


class MaskingCollator:
    """Pad a list of examples and mask them: input_ids, token_type_ids, attention_mask, labels.

    `next_sentence_label` is added when the examples carry one, and `index` always. Arrays are
    int64 numpy arrays, or torch tensors with `return_tensors="pt"` (torch imported only then).
    Call `set_epoch(epoch)` before each epoch (and before a DataLoader starts its workers).
    """

    def __init__(self, tokenizer, *, seed: int = 0, mlm_probability: float = 0.15,
                 mask_replace_prob: float = 0.8, random_replace_prob: float = 0.1, whole_word: bool = False,
                 pad_to_multiple_of: Optional[int] = None, return_tensors: str = "np"):
        if return_tensors not in ("np", "pt"):
            raise TokkitError(f"return_tensors must be 'np' or 'pt', got {return_tensors!r}")
        if pad_to_multiple_of is not None and int(pad_to_multiple_of) < 1:
            raise TokkitError(f"pad_to_multiple_of must be a positive integer, got {pad_to_multiple_of}")
        ids = special_token_ids(tokenizer)
        self.spec = MaskSpec(vocab_size=tokenizer.vocab_size, mask_token_id=ids["[MASK]"],
                             special_ids=_all_special_ids(tokenizer), mlm_probability=mlm_probability,
                             mask_replace_prob=mask_replace_prob, random_replace_prob=random_replace_prob)
        self.pad_id = ids["[PAD]"] if ids["[PAD]"] is not None else 0
        self.seed = int(seed)
        self.epoch = 0
        self.pad_to_multiple_of = pad_to_multiple_of
        self.return_tensors = return_tensors
        self.word_tables = word_tables(tokenizer) if whole_word else None

    def set_epoch(self, epoch: int) -> None:
        """Masks are redrawn for every epoch: example i in epoch e always gets the same mask."""
        self.epoch = int(epoch)

    def keys(self, indices: Sequence[int]) -> np.ndarray:
        """The masking keys of each example: drawn from default_rng([seed, epoch, index])."""
        return np.concatenate([row_keys(np.random.default_rng([self.seed, self.epoch, int(i)]), 1)
                               for i in indices]) if len(indices) else np.zeros((0, 2), np.uint64)

    def __call__(self, examples: Sequence[Dict]) -> Dict:
        if not examples:
            raise TokkitError("cannot collate an empty list of examples")
        try:
            indices = [int(e["index"]) for e in examples]
        except KeyError:
            raise TokkitError("every example needs its global 'index' (masks are keyed by it)") from None
        rows = [np.asarray(e["input_ids"]) for e in examples]
        width = max(len(r) for r in rows)
        if self.pad_to_multiple_of:
            m = int(self.pad_to_multiple_of)
            width = -(-width // m) * m
        n = len(rows)
        input_ids = np.full((n, width), self.pad_id, dtype=np.int64)
        types = np.zeros((n, width), dtype=np.int64)
        attention = np.zeros((n, width), dtype=np.int64)
        special = np.ones((n, width), dtype=np.uint8)
        for r, (e, ids) in enumerate(zip(examples, rows)):
            k = len(ids)
            input_ids[r, :k] = ids
            attention[r, :k] = 1
            if "token_type_ids" in e:
                types[r, :k] = e["token_type_ids"]
            special[r, :k] = e["special_tokens_mask"] if "special_tokens_mask" in e else 0
        word_ids = self._word_ids(input_ids, special) if self.word_tables is not None else None
        masked, labels = apply_mask(self.spec, input_ids, special, keys=self.keys(indices), word_ids=word_ids)
        batch = {"input_ids": masked, "token_type_ids": types, "attention_mask": attention, "labels": labels,
                 "index": np.asarray(indices, dtype=np.int64)}
        if "next_sentence_label" in examples[0]:
            batch["next_sentence_label"] = np.asarray([int(e["next_sentence_label"]) for e in examples],
                                                      dtype=np.int64)
        if self.return_tensors == "pt":
            import torch

            batch = {k: torch.from_numpy(v) for k, v in batch.items()}
        return batch

    def _word_ids(self, ids: np.ndarray, special: np.ndarray) -> np.ndarray:
        """Number the words of each row: a new word starts after a word end or at a word start."""
        starts, ends = self.word_tables
        safe = np.clip(ids, 0, len(starts) - 1)
        boundary = (starts[safe] != 0) | (special != 0)
        boundary[:, 1:] |= (ends[safe[:, :-1]] != 0) | (special[:, :-1] != 0)
        return np.cumsum(boundary, axis=1)
