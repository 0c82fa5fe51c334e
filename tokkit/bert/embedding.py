"""Features from a trained encoder: hidden states of chosen layers, pooled per text or per word.

The feature-based use of BERT: the encoder stays frozen, and a text (or each of its words) becomes
a vector that any classifier can take. `layers` picks the hidden states as BERT's feature-based NER
comparison does: the last layer, the second to last, or the sum or concatenation of the last four.

>>> vecs = embed(model, tokenizer, ["a first sentence", "another one"])              # doctest: +SKIP
>>> vecs.shape                                                                      # doctest: +SKIP
(2, 256)
>>> words = embed(model, tokenizer, ["New York is big"], pooling="words", layers="concat_last_four")  # doctest: +SKIP
>>> words[0].shape                                                                  # doctest: +SKIP
(4, 1024)
"""
from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np
import torch

import tokkit
from tokkit.bert.model import BertModel
from tokkit.bert.modernbert import ModernBertModel
from tokkit.errors import TokkitError

LAYERS = ("last", "second_to_last", "sum_last_four", "concat_last_four")
POOLINGS = ("mean", "cls", "words")


def encoder_of(model) -> torch.nn.Module:
    """The encoder of any tokkit model: itself when it is one, else its `encoder`."""
    base = getattr(model, "encoder", model)
    if not isinstance(base, (BertModel, ModernBertModel)):
        raise TokkitError(f"expected a tokkit BERT or ModernBERT model, not {type(model).__name__}")
    return base


def select_layers(states: list[torch.Tensor], layers: str) -> torch.Tensor:
    """One (B, T, C') tensor from [embeddings, layer 1, ..., layer L] as `layers` asks.

    >>> s = [torch.full((1, 1, 2), float(i)) for i in range(6)]
    >>> select_layers(s, "sum_last_four")[0, 0].tolist(), select_layers(s, "concat_last_four").shape[-1]
    ([14.0, 14.0], 8)
    """
    if layers == "last":
        return states[-1]
    if layers == "second_to_last":
        return states[-2]
    last_four = states[-4:]
    if layers == "sum_last_four":
        return torch.stack(last_four).sum(0)
    if layers == "concat_last_four":
        return torch.cat(last_four, dim=-1)
    raise TokkitError(f"layers must be one of {list(LAYERS)}, not {layers!r}")


@torch.no_grad()
def embed(model, tokenizer, texts: Sequence[str], *, layers: str = "last", pooling: str = "mean",
          batch_size: int = 32, max_length: Optional[int] = None,
          device: Optional[torch.device] = None) -> Union[np.ndarray, list[np.ndarray]]:
    """Vectors for `texts` from a frozen encoder (float32, in input order).

    Each text is encoded with the tokenizer's template ([CLS] text [SEP]), truncated to
    `max_length` (default: the model's positions). `pooling="mean"` averages over the text's
    tokens and the template's, `"cls"` takes the [CLS] position; both give (len(texts), D).
    `pooling="words"` gives a list with one (words, D) array per text, each word's vector being
    its first sub-token's, as BERT's feature-based NER does. `layers` as in select_layers; D is
    the hidden size, or four times it for "concat_last_four". Texts are batched by length, so
    padding never changes a vector.
    """
    if isinstance(texts, str):
        raise TokkitError("embed expects a list of texts, not one string")
    if pooling not in POOLINGS:
        raise TokkitError(f"pooling must be one of {list(POOLINGS)}, not {pooling!r}")
    if layers not in LAYERS:
        raise TokkitError(f"layers must be one of {list(LAYERS)}, not {layers!r}")
    base = encoder_of(model)
    if base.config.vocab_size != tokenizer.vocab_size:
        raise TokkitError(f"model vocab size {base.config.vocab_size} does not match the tokenizer's "
                          f"{tokenizer.vocab_size}")
    limit = min(max_length or base.config.max_position_embeddings, base.config.max_position_embeddings)
    rows = tokkit.encode(tokenizer, list(texts), max_length=limit, truncation="longest_first", padding=None)
    device = device if device is not None else next(base.parameters()).device
    was_training = base.training
    base.eval()
    try:
        pooled = [_pool(states, rows, i, pooling) for i, states in _batches(base, rows, layers, batch_size, device)]
    finally:
        base.train(was_training)
    out = [None] * len(texts)
    for i, vec in pooled:
        out[i] = vec
    return out if pooling == "words" else np.stack(out) if out else np.zeros((0, base.config.hidden_size), np.float32)


def _batches(base, rows: dict, layers: str, batch_size: int, device):
    """(row index, its hidden states (T, D)) for every row, run in batches of similar length."""
    ids = rows["input_ids"]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # similar lengths share a batch
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        T = max(len(ids[i]) for i in idx)
        x = torch.zeros((len(idx), T), dtype=torch.long)
        types = torch.zeros_like(x)
        mask = torch.zeros_like(x)
        for r, i in enumerate(idx):
            n = len(ids[i])
            x[r, :n] = torch.from_numpy(ids[i].astype(np.int64))
            types[r, :n] = torch.from_numpy(rows["token_type_ids"][i].astype(np.int64))
            mask[r, :n] = 1
        states = base(x.to(device), types.to(device), mask.to(device), all_layers=True)
        hidden = select_layers(states, layers).float().cpu()
        for r, i in enumerate(idx):
            yield i, hidden[r, :len(ids[i])]


def _pool(hidden: torch.Tensor, rows: dict, i: int, pooling: str):
    if pooling == "mean":
        return i, hidden.mean(0).numpy()
    if pooling == "cls":
        return i, hidden[0].numpy()
    words = rows["word_ids"][i]
    first = [int(np.flatnonzero(words == w)[0]) for w in np.unique(words[words >= 0])]
    return i, hidden[first].numpy().reshape(len(first), -1)
