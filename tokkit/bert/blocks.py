"""Building blocks both encoders and every head share: the activation and the dense -> act -> norm transform.

>>> import torch
>>> head = MaskedLMHead(8, 20, act="gelu", eps=1e-5, bias=False, decoder_bias=True)
>>> head(torch.zeros(3, 8), torch.randn(20, 8)).shape   # tied: the decoder weight is passed in
torch.Size([3, 20])
"""
from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def dropout(x: Tensor, p: float, training: bool = True) -> Tensor:
    """Inverted dropout whose masks come from 16-bit random integers, four to a 64-bit draw.

    torch's dropout draws one random number per element, which on CPU costs more than the layer it
    follows on short batches (a quarter of a BERT fine-tuning step); this draws a quarter as many.
    The rate is exact to 1/65536.

    >>> torch.manual_seed(0) and None
    >>> kept = dropout(torch.ones(100_000), 0.1)
    >>> round(float((kept == 0).float().mean()), 2), round(float(kept.max()), 4)
    (0.1, 1.1111)
    """
    if not training or p == 0.0:
        return x
    n = x.numel()
    draws = torch.empty(-(-n // 4), dtype=torch.int64, device=x.device).random_(-(2 ** 63), 2 ** 63 - 1)
    keep = draws.view(torch.int16)[:n].view(x.shape) >= round(p * 65536) - 32768
    return x * (keep.to(x.dtype) * (1.0 / (1.0 - p)))


class Dropout(nn.Module):
    """nn.Dropout's interface over `dropout`."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


def gelu(x: Tensor, kind: str) -> Tensor:
    """GELU, exact ("gelu") or with the tanh approximation ("gelu_tanh")."""
    return F.gelu(x, approximate="tanh" if kind == "gelu_tanh" else "none")


class Transform(nn.Module):
    """dense -> activation -> LayerNorm: BERT's MLM transform, ModernBERT's prediction head.

    `bias` puts biases on the dense layer and the norm (BERT) or leaves them out (ModernBERT).
    """

    def __init__(self, width: int, *, act: str, eps: float, bias: bool):
        super().__init__()
        self.act = act
        self.dense = nn.Linear(width, width, bias=bias)
        self.norm = nn.LayerNorm(width, eps=eps, bias=bias)

    def forward(self, h: Tensor) -> Tensor:
        return self.norm(gelu(self.dense(h), self.act))


class MaskedLMHead(nn.Module):
    """Transform, then the decoder tied to the token embeddings (its weight passed in), plus a bias."""

    def __init__(self, width: int, vocab_size: int, *, act: str, eps: float, bias: bool, decoder_bias: bool):
        super().__init__()
        self.transform = Transform(width, act=act, eps=eps, bias=bias)
        self.bias: Optional[nn.Parameter] = nn.Parameter(torch.zeros(vocab_size)) if decoder_bias else None

    def forward(self, h: Tensor, decoder_weight: Tensor) -> Tensor:
        """(..., C) hidden states -> (..., V) logits."""
        return F.linear(self.transform(h), decoder_weight, self.bias)
