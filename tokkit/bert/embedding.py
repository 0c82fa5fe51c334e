"""Sentence vectors: mean of the last hidden states over each text's tokens, batched.

>>> vecs = embed(model, tokenizer, ["a first sentence", "another one"])   # doctest: +SKIP
>>> vecs.shape                                                            # doctest: +SKIP
(2, 256)
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch

from tokkit.bert.model import BertForPreTraining, BertModel
from tokkit.bert.modernbert import ModernBertForMaskedLM, ModernBertModel
from tokkit.errors import TokkitError


@torch.no_grad()
def embed(model, tokenizer, texts: Sequence[str], *, batch_size: int = 32, max_length: Optional[int] = None,
          device: Optional[torch.device] = None) -> np.ndarray:
    """Mean-pooled sentence vectors (float32, shape (len(texts), hidden)) for `texts`.

    Each text is encoded as [CLS] tokens [SEP], truncated to `max_length` (default: the model's
    positions), and averaged over its non-padding positions. Texts are batched by length, so
    padding never changes a vector; the result follows the input order.
    """
    if isinstance(texts, str):
        raise TokkitError("embed expects a list of texts, not one string")
    base = model.bert if isinstance(model, BertForPreTraining) else model
    base = base.model if isinstance(base, ModernBertForMaskedLM) else base
    if not isinstance(base, (BertModel, ModernBertModel)):
        raise TokkitError(f"embed expects a tokkit BERT or ModernBERT model, not {type(model).__name__}")
    if base.config.vocab_size != tokenizer.vocab_size:
        raise TokkitError(f"model vocab size {base.config.vocab_size} does not match the tokenizer's "
                          f"{tokenizer.vocab_size}")
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    if cls_id is None or sep_id is None:
        raise TokkitError("tokenizer has no [CLS]/[SEP] token")
    pad_id = tokenizer.token_to_id("[PAD]") or 0
    limit = min(max_length or base.config.max_position_embeddings, base.config.max_position_embeddings)
    if limit < 2:
        raise TokkitError(f"max_length must be at least 2, got {limit}")
    if device is None:
        device = next(base.parameters()).device
    rows = [[cls_id] + ids[: limit - 2] + [sep_id] for ids in tokenizer.encode_batch(list(texts))]
    out = np.zeros((len(rows), base.config.hidden_size), dtype=np.float32)
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]))  # similar lengths share a batch
    was_training = base.training
    base.eval()
    try:
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            T = max(len(rows[i]) for i in idx)
            ids = torch.full((len(idx), T), pad_id, dtype=torch.long)
            mask = torch.zeros((len(idx), T), dtype=torch.long)
            for r, i in enumerate(idx):
                ids[r, : len(rows[i])] = torch.tensor(rows[i])
                mask[r, : len(rows[i])] = 1
            ids, mask = ids.to(device), mask.to(device)
            hidden = base(ids, mask) if isinstance(base, ModernBertModel) else base(ids, None, mask)[0]  # (B, T, C)
            m = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * m).sum(1) / m.sum(1)
            out[idx] = pooled.float().cpu().numpy()
    finally:
        base.train(was_training)
    return out
