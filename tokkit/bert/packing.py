"""Run an encoder's token-wise layers on the real tokens of a padded batch only.

A batch of texts of different lengths is padded to its longest; on short texts (film reviews,
tagged sentences) half of its positions can be padding. Every matrix product of a layer (the
query/key/value and output projections, the feed-forward block) works token by token, so the
encoders run them on the real tokens packed into one (N, C) matrix, and unpack to (B, T, ...)
only for attention, which needs the rows. A classifier that reads [CLS] alone can also ask the
last layer for that one position: its queries, output projection and feed-forward block then run
on B rows instead of N.

>>> mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
>>> rows = Rows(mask, 2, 3)
>>> x = torch.arange(6.0).view(2, 3, 1)
>>> rows.pack(x).flatten().tolist(), rows.unpack(rows.pack(x)).flatten().tolist(), rows.firsts.tolist()
([0.0, 1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 2.0, 3.0, 4.0, 0.0], [0, 3])
"""
from __future__ import annotations

from typing import Callable, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tokkit.bert.blocks import dropout as drop


class Rows:
    """Where the real tokens of a (B, T) batch are: `pack` keeps them, `unpack` restores the rows."""

    def __init__(self, attention_mask: Optional[Tensor], B: int, T: int):
        self.B, self.T = B, T
        self.index: Optional[Tensor] = None  # flat positions of the real tokens; None: no padding
        device = attention_mask.device if attention_mask is not None else None
        if attention_mask is not None and not bool(attention_mask.all()):
            self.index = attention_mask.reshape(-1).nonzero().squeeze(1)
            lengths = attention_mask.sum(1)
            self.firsts = torch.cumsum(lengths, 0) - lengths  # each row's first token in the packed matrix
            self.positions = self.index % T                   # each packed token's position in its row
            self.row_of = self.index // T                     # and its row
        else:
            self.firsts = torch.arange(B, device=device) * T
            self.positions = torch.arange(T, device=device).repeat(B)

    def pack(self, x: Tensor) -> Tensor:
        """(B, T, ...) -> (N, ...), the real tokens in row order."""
        flat = x.reshape(self.B * self.T, *x.shape[2:])
        return flat if self.index is None else flat.index_select(0, self.index)

    def unpack(self, x: Tensor) -> Tensor:
        """(N, ...) -> (B, T, ...), zeros at the padding."""
        if self.index is not None:
            x = x.new_zeros(self.B * self.T, *x.shape[1:]).index_copy(0, self.index, x)
        return x.view(self.B, self.T, *x.shape[1:])

    def to_heads(self, x: Tensor) -> Tensor:
        """Packed (N, H, D) -> (B, H, T, D) for attention, zeros at the padding (written there directly,
        so the product that follows reads contiguous rows)."""
        if self.index is None:
            return x.view(self.B, self.T, *x.shape[1:]).transpose(1, 2)
        out = x.new_zeros(self.B, x.shape[1], self.T, x.shape[2])
        out[self.row_of, :, self.positions] = x
        return out

    def from_heads(self, a: Tensor) -> Tensor:
        """Attention's (B, H, T, D) output -> packed (N, H * D)."""
        if self.index is None:
            return a.transpose(1, 2).reshape(self.B * self.T, -1)
        return a[self.row_of, :, self.positions].reshape(self.row_of.shape[0], -1)


def project(h: Tensor, qkv: nn.Linear, rows: Rows, heads: int, cls_only: bool,
            rotate: Optional[Callable[[Tensor, Tensor], Tensor]] = None) -> tuple[Tensor, Tensor, Tensor]:
    """Queries, keys and values (B, H, T, D) from packed states `h` (N, C) through one fused projection.

    `rotate(x, positions)` turns packed (N, H, D) queries and keys by their positions (ModernBERT's
    rotary embeddings) before they are unpacked, so padding costs it nothing. With `cls_only` the
    queries are each row's first position's alone, (B, H, 1, D); position 0 is never rotated.
    """
    C = h.shape[-1]
    D = C // heads
    if cls_only:
        bias = qkv.bias
        q = F.linear(h[rows.firsts], qkv.weight[:C], None if bias is None else bias[:C])  # (B, C)
        k, v = F.linear(h, qkv.weight[C:], None if bias is None else bias[C:]).view(-1, 2, heads, D).unbind(1)
        q = q.view(rows.B, 1, heads, D).transpose(1, 2)
    else:
        q, k, v = qkv(h).view(-1, 3, heads, D).unbind(1)  # each (N, H, D)
    if rotate is not None:
        k = rotate(k, rows.positions)
        q = q if cls_only else rotate(q, rows.positions)
    return (q if cls_only else rows.to_heads(q)), rows.to_heads(k), rows.to_heads(v)


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor], dropout: float) -> Tensor:
    """Softmax attention, (B, H, Tq, D); `mask` True where a query may attend.

    On CPU over rows of up to 512 tokens this is an explicit product with an additive mask and a
    float32 softmax: its forward and backward passes take about 2/3 of the time of torch's fused
    CPU kernel in float32 and 1/5 in bfloat16 (4 heads of 64, 70 tokens). Elsewhere the fused kernel.
    """
    if q.device.type != "cpu" or k.shape[2] > 512:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout)
    scores = torch.matmul(q, k.transpose(-1, -2)).float() * (q.shape[-1] ** -0.5)  # (B, H, Tq, T)
    if mask is not None:
        scores = scores + torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device).masked_fill_(
            ~mask, float("-inf"))
    return torch.matmul(drop(torch.softmax(scores, dim=-1).to(v.dtype), dropout), v)


def attend(q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor], rows: Rows, dropout: float,
           cls_only: bool) -> Tensor:
    """Attention of (B, H, Tq, D) queries; the result packed back to (N, C), or (B, C) for [CLS] queries."""
    if cls_only and mask is not None and mask.dim() >= 2 and mask.shape[-2] > 1:
        mask = mask[..., :1, :]  # the first position's row of a (.., T, T) mask
    a = attention(q, k, v, mask, dropout)  # (B, H, Tq, D)
    return a[:, :, 0].reshape(a.shape[0], -1) if cls_only else rows.from_heads(a)
