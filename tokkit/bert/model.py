"""A small BERT in one file: embeddings, post-LN encoder layers, pooler, MLM and NSP heads.

>>> import torch
>>> from tokkit.bert.model import BertConfig, BertForPreTraining
>>> model = BertForPreTraining(BertConfig(vocab_size=100, hidden_size=32, num_heads=2,
...                                      intermediate_size=64, num_layers=2))
>>> ids = torch.randint(5, 100, (2, 8))
>>> labels = torch.full((2, 8), -100); labels[:, 3] = ids[:, 3]
>>> out = model(ids, labels=labels)
>>> out.mlm_logits.shape  # only the 2 labelled positions get logits
torch.Size([2, 100])
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import NamedTuple, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tokkit._shape import check_shape
from tokkit.bert.blocks import Dropout, MaskedLMHead, gelu
from tokkit.bert.packing import Rows, attend, project
from tokkit.bert.sparse import sparse_mlm_loss


@dataclass
class BertConfig:
    """Model shape. `vocab_size` comes from the tokenizer; the rest defaults to a small 4 x 256 BERT.

    >>> BertConfig(vocab_size=8000).hidden_size
    256
    """

    vocab_size: int = 30522
    hidden_size: int = 256
    num_layers: int = 4
    num_heads: int = 4
    intermediate_size: int = 1024
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    dropout: float = 0.1
    attention_dropout: float = 0.1
    layer_norm_eps: float = 1e-12
    hidden_act: str = "gelu"  # "gelu" (erf, as in BERT) or "gelu_tanh"
    pad_token_id: int = 0
    initializer_range: float = 0.02

    def __post_init__(self):
        check_shape(asdict(self))  # before the divisions below, and before any tensor is allocated
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size {self.hidden_size} is not a multiple of num_heads {self.num_heads}")
        if self.hidden_act not in ("gelu", "gelu_tanh"):
            raise ValueError(f"hidden_act must be 'gelu' or 'gelu_tanh', not {self.hidden_act!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "BertConfig":
        return config_from_dict(cls, d)


def config_from_dict(cls, d: dict):
    """A config dataclass from a dict; a key it has no field for is refused ("arch" names the class).

    >>> BertConfig.from_dict({"num_layer": 2})
    Traceback (most recent call last):
    ValueError: unknown model setting 'num_layer' (BertConfig has: attention_dropout, dropout, ...)
    """
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(d) - known - {"arch"})
    if unknown:
        names = ", ".join(sorted(known))
        raise ValueError(f"unknown model setting {unknown[0]!r} ({cls.__name__} has: {names})")
    return cls(**{k: v for k, v in d.items() if k in known})


class Embeddings(nn.Module):
    """token + learned position + segment, then LayerNorm and dropout."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.pos = nn.Embedding(cfg.max_position_embeddings, cfg.hidden_size)
        self.seg = nn.Embedding(cfg.type_vocab_size, cfg.hidden_size)
        self.ln = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.drop = Dropout(cfg.dropout)

    def forward(self, input_ids: Tensor, token_type_ids: Optional[Tensor], rows: Rows) -> Tensor:
        """Packed (N, C) embeddings of the real tokens."""
        T = input_ids.shape[1]
        x = self.tok(input_ids) + self.pos.weight[:T]  # (B, T, C) + (T, C)
        if token_type_ids is None:
            x = x + self.seg.weight[0]
        else:
            x = x + self.seg(token_type_ids)
        return self.drop(self.ln(rows.pack(x)))


class EncoderLayer(nn.Module):
    """Post-LN: x = LN(x + attn(x)); x = LN(x + ffn(x)), as in the BERT paper."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        C = cfg.hidden_size
        self.n_head = cfg.num_heads
        self.act = cfg.hidden_act
        self.attn_p = cfg.attention_dropout
        self.qkv = nn.Linear(C, 3 * C)  # one matmul for query, key and value
        self.attn_out = nn.Linear(C, C)
        self.ln1 = nn.LayerNorm(C, eps=cfg.layer_norm_eps)
        self.ffn_in = nn.Linear(C, cfg.intermediate_size)
        self.ffn_out = nn.Linear(cfg.intermediate_size, C)
        self.ln2 = nn.LayerNorm(C, eps=cfg.layer_norm_eps)
        self.drop = Dropout(cfg.dropout)

    def forward(self, x: Tensor, attn_mask: Optional[Tensor], rows: Rows, cls_only: bool = False) -> Tensor:
        """Packed states (N, C) -> (N, C); with `cls_only`, the first position of each row alone, (B, C)."""
        q, k, v = project(x, self.qkv, rows, self.n_head, cls_only)  # each (B, H, T, D)
        a = attend(q, k, v, attn_mask, rows, self.attn_p if self.training else 0.0, cls_only)
        if cls_only:
            x = x[rows.firsts]
        x = self.ln1(x + self.drop(self.attn_out(a)))
        h = self.ffn_out(gelu(self.ffn_in(x), self.act))
        return self.ln2(x + self.drop(h))


class BertModel(nn.Module):
    """The encoder: (input_ids, token_type_ids, attention_mask) -> hidden states (B, T, C).

    Its pooler (dense + tanh on [CLS]) is BERT's sentence vector, used by the NSP and
    sequence-classification heads through `sentence_vector`.
    """

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.config = cfg
        self.embeddings = Embeddings(cfg)
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.num_layers))
        self.pooler = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.apply(lambda m: _init(m, cfg.initializer_range))

    @property
    def token_embeddings(self) -> nn.Embedding:
        return self.embeddings.tok

    def forward(self, input_ids: Tensor, token_type_ids: Optional[Tensor] = None,
                attention_mask: Optional[Tensor] = None, *, all_layers: bool = False,
                cls_only: bool = False) -> Tensor | list[Tensor]:
        """Hidden states (B, T, C); with `all_layers`, [embeddings, layer 1, ..., layer L] instead; with
        `cls_only`, the first position's alone, (B, 1, C), the last layer computing nothing else.
        Padding positions hold zeros: the layers run on the real tokens only (tokkit.bert.packing)."""
        B, T = input_ids.shape
        check_length(input_ids, self.config.max_position_embeddings)
        rows = Rows(attention_mask, B, T)
        mask = None
        # Without padding SDPA takes its fast path; with padding, keys at pad positions are hidden.
        if rows.index is not None:
            mask = attention_mask.bool()[:, None, None, :]  # (B, 1, 1, T), True = attend
        x = self.embeddings(input_ids, token_type_ids, rows)
        states = [x]
        for i, layer in enumerate(self.layers):
            x = layer(x, mask, rows, cls_only and i == len(self.layers) - 1)
            states.append(x)
        if cls_only:
            return (x if self.layers else x[rows.firsts])[:, None]
        return [rows.unpack(s) for s in states] if all_layers else rows.unpack(x)

    def sentence_vector(self, hidden: Tensor, attention_mask: Optional[Tensor] = None,
                        pooling: str = "cls") -> Tensor:
        """BERT's pooled output: tanh(dense(hidden at [CLS])), (B, C). Only "cls" pooling exists here."""
        if pooling != "cls":
            raise ValueError(f"BERT pools through its [CLS] pooler only, not {pooling!r}")
        return torch.tanh(self.pooler(hidden[:, 0]))


def check_length(input_ids: Tensor, positions: int) -> None:
    if input_ids.shape[1] > positions:
        raise ValueError(f"sequence length {input_ids.shape[1]} exceeds max_position_embeddings {positions}")


class PreTrainingOutput(NamedTuple):
    loss: Optional[Tensor]          # mean MLM loss + NSP loss (when their labels are given)
    mlm_logits: Tensor              # (N, V) at labelled positions when labels given, else (B, T, V)
    nsp_logits: Optional[Tensor]    # (B, 2); None for a model without an NSP head
    mlm_loss_sum: Optional[Tensor]  # summed cross-entropy over labelled positions
    mlm_count: Optional[Tensor]     # number of labelled positions
    nsp_loss: Optional[Tensor]
    hidden_states: Tensor           # (B, T, C)
    rtd_loss: Optional[Tensor] = None  # replaced-token detection, weighted (tokkit.bert.electra)


class BertForPreTraining(nn.Module):
    """BERT with its masked-LM head (decoder tied to the token embeddings) and NSP head."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.config = cfg
        self.encoder = BertModel(cfg)
        self.mlm = MaskedLMHead(cfg.hidden_size, cfg.vocab_size, act=cfg.hidden_act, eps=cfg.layer_norm_eps,
                                bias=True, decoder_bias=True)
        self.nsp = nn.Linear(cfg.hidden_size, 2)
        for m in (self.mlm.transform.dense, self.mlm.transform.norm, self.nsp):
            _init(m, cfg.initializer_range)

    def mlm_head(self, h: Tensor) -> Tensor:
        """(..., C) hidden states -> (..., V) logits, through the tied token embeddings."""
        return self.mlm(h, self.encoder.token_embeddings.weight)

    def forward(self, input_ids: Tensor, token_type_ids: Optional[Tensor] = None,
                attention_mask: Optional[Tensor] = None, labels: Optional[Tensor] = None,
                next_sentence_label: Optional[Tensor] = None) -> PreTrainingOutput:
        hidden = self.encoder(input_ids, token_type_ids, attention_mask)
        nsp_logits = self.nsp(self.encoder.sentence_vector(hidden))
        loss, mlm_logits, mlm_sum, count = masked_lm(self.mlm_head, hidden, labels)
        nsp_loss = None
        if next_sentence_label is not None:
            nsp_loss = F.cross_entropy(nsp_logits.float(), next_sentence_label.view(-1))
            loss = nsp_loss if loss is None else loss + nsp_loss
        return PreTrainingOutput(loss, mlm_logits, nsp_logits, mlm_sum, count, nsp_loss, hidden)


def masked_lm(head, hidden: Tensor, labels: Optional[Tensor]):
    """(loss, logits, summed loss, labelled count): logits everywhere without labels (B, T, V), else
    only where a label exists (~15% of positions, most of the head's cost saved), (N, V)."""
    if labels is None:
        return None, head(hidden), None, None
    return sparse_mlm_loss(head, hidden, labels)


def _init(m: nn.Module, std: float) -> None:
    # BERT's initialisation: N(0, 0.02) weights, zero biases, unit LayerNorm.
    if isinstance(m, (nn.Linear, nn.Embedding)):
        nn.init.normal_(m.weight, std=std)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)
    elif isinstance(m, nn.LayerNorm):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)


def num_parameters(model: nn.Module) -> int:
    """Number of distinct parameters (tied weights counted once)."""
    return sum(p.numel() for p in model.parameters())


def perplexity(loss: float) -> float:
    """exp(loss), capped so a diverged run reports inf instead of raising."""
    return math.exp(loss) if loss < 700 else float("inf")
