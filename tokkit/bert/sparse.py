"""Sparse MLM prediction with a bounded set of shapes.

The MLM head only needs logits where a label exists, but the number of labelled positions changes
with every batch. Every new row count is a new shape for the head's matrix products, the logits,
their float32 copy and their gradients, and a long run meets hundreds of them: the allocator and
the math library's per-shape caches (oneDNN primitives under bfloat16 autocast) keep memory for
each, and the process's RSS climbs by a few MB per batch. Padding the selected rows up to a
multiple of `ROW_BUCKET` (with ignored targets) leaves a handful of shapes for a whole run.

>>> import torch
>>> labels = torch.tensor([[-100, 7, -100], [5, -100, -100]])
>>> rows, target, n = labelled_rows(labels, bucket=4)
>>> rows.tolist(), target.tolist(), n
([1, 3, 0, 0], [7, 5, -100, -100], 2)
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

IGNORE_INDEX = -100
ROW_BUCKET = 64


def labelled_rows(labels: Tensor, bucket: int = ROW_BUCKET) -> tuple[Tensor, Tensor, int]:
    """(row indices into labels.view(-1), their targets, N): N labelled rows first, padding after.

    The padding repeats row 0 with target IGNORE_INDEX, so it costs compute but no loss.
    """
    flat = labels.reshape(-1)
    rows = (flat != IGNORE_INDEX).nonzero().squeeze(1)  # (N,)
    n = rows.numel()
    size = max(bucket, -(-n // bucket) * bucket)
    if size > n:
        rows = torch.cat([rows, rows.new_zeros(size - n)])
    target = flat[rows].clone()
    target[n:] = IGNORE_INDEX
    return rows, target, n


def sparse_mlm_loss(head: nn.Module, hidden: Tensor, labels: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The MLM head at the labelled positions only: (loss, logits (N, V), summed loss, label count).

    Both architectures train through this: logits only where a label exists (15-30% of positions),
    rows padded to a bucket so batches share a few shapes.
    """
    rows, target, n = labelled_rows(labels)
    logits = head(hidden.reshape(-1, hidden.shape[-1])[rows])  # (N padded, V)
    mlm_sum = F.cross_entropy(logits.float(), target, reduction="sum")
    count = (labels != IGNORE_INDEX).sum()
    return mlm_sum / count.clamp(min=1), logits[:n], mlm_sum, count
