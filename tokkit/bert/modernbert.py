"""A small ModernBERT in one file: pre-norm layers, rotary positions, GeGLU, local and global attention.

The same computation as transformers' `ModernBertForMaskedLM`, so a model trained here loads there
(and back) through tokkit.bert.hf. Compared with the BERT in model.py:

- LayerNorms without biases, *before* each attention and feed-forward block (pre-norm), one right
  after the token embeddings and one after the last layer; the first layer skips its attention norm
  because the embedding norm has just run.
- No learned positions: queries and keys are rotated by their position (rotary embeddings), with
  theta `global_rope_theta` in global layers and `local_rope_theta` in local ones.
- Every `global_every`-th layer (0, 3, 6 ...) attends over the whole sequence; the others only to
  tokens at most `local_window // 2` positions away.
- The feed-forward block is a GeGLU: gelu(x W_in) * (x W_gate), then W_out; no biases anywhere
  except the decoder's.
- No token types, pooler or NSP head: the MLM head is dense -> gelu -> norm -> tied decoder.

>>> import torch
>>> from tokkit.bert.modernbert import ModernBertConfig, ModernBertForMaskedLM
>>> model = ModernBertForMaskedLM(ModernBertConfig(vocab_size=100, hidden_size=32, num_heads=2,
...                                                intermediate_size=48, num_layers=2))
>>> ids = torch.randint(5, 100, (2, 8))
>>> labels = torch.full((2, 8), -100); labels[:, 3] = ids[:, 3]
>>> model(ids, labels=labels).mlm_logits.shape  # only the 2 labelled positions get logits
torch.Size([2, 100])
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional

import torch
from torch import Tensor, nn

from tokkit._shape import check_shape
from tokkit.bert.blocks import Dropout, MaskedLMHead, gelu
from tokkit.bert.model import PreTrainingOutput, check_length, config_from_dict, masked_lm
from tokkit.bert.packing import Rows, attend, project


@dataclass
class ModernBertConfig:
    """Model shape. `vocab_size` comes from the tokenizer; the rest defaults to a small 4 x 256 model.

    >>> ModernBertConfig(vocab_size=8000).layer_types
    ['global', 'local', 'local', 'global']
    """

    vocab_size: int = 30522
    hidden_size: int = 256
    num_layers: int = 4
    num_heads: int = 4
    intermediate_size: int = 384       # GeGLU width: W_in maps C -> 2 * intermediate_size
    max_position_embeddings: int = 512
    global_every: int = 3              # layer i attends globally when i % global_every == 0
    local_window: int = 128            # local layers see tokens at most local_window // 2 away
    global_rope_theta: float = 160_000.0
    local_rope_theta: float = 10_000.0
    norm_eps: float = 1e-5
    embedding_dropout: float = 0.0
    attention_dropout: float = 0.0
    mlp_dropout: float = 0.0
    hidden_act: str = "gelu"           # "gelu" (erf) or "gelu_tanh"
    pad_token_id: int = 0
    initializer_range: float = 0.02
    initializer_cutoff_factor: float = 2.0  # weights drawn from a normal truncated at +-factor * std
    decoder_bias: bool = True

    def __post_init__(self):
        check_shape(asdict(self))  # before the divisions below, and before any tensor is allocated
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size {self.hidden_size} is not a multiple of num_heads {self.num_heads}")
        if (self.hidden_size // self.num_heads) % 2:
            raise ValueError("rotary positions need an even head size (hidden_size / num_heads)")
        if self.hidden_act not in ("gelu", "gelu_tanh"):
            raise ValueError(f"hidden_act must be 'gelu' or 'gelu_tanh', not {self.hidden_act!r}")
        if self.global_every < 1 or self.local_window < 2:
            raise ValueError("global_every must be >= 1 and local_window >= 2")

    @property
    def layer_types(self) -> list[str]:
        return ["global" if i % self.global_every == 0 else "local" for i in range(self.num_layers)]

    def to_dict(self) -> dict:
        return {"arch": "modernbert", **asdict(self)}

    @classmethod
    def from_dict(cls, d: dict) -> "ModernBertConfig":
        return config_from_dict(cls, d)


def _norm(cfg: ModernBertConfig) -> nn.LayerNorm:
    return nn.LayerNorm(cfg.hidden_size, eps=cfg.norm_eps, bias=False)


class Rotary(nn.Module):
    """cos and sin tables for one theta: position p rotates channel pair (j, j + D/2) by p * theta^(-2j/D)."""

    def __init__(self, head_dim: int, theta: float, max_positions: int):
        super().__init__()
        inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)  # (D/2,)
        angles = torch.arange(max_positions, dtype=torch.float32)[:, None] * inv_freq          # (P, D/2)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x: Tensor, positions: Tensor) -> Tensor:
        """Rotate packed (N, H, D) queries or keys at `positions` (N,); computed in float32, returned
        in x's dtype."""
        c, s = self.cos[positions][:, None], self.sin[positions][:, None]  # (N, 1, D/2)
        x1, x2 = x.float().chunk(2, dim=-1)
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


class EncoderLayer(nn.Module):
    """Pre-norm: x = x + attn(norm(x)); x = x + geglu(norm(x))."""

    def __init__(self, cfg: ModernBertConfig, index: int):
        super().__init__()
        C = cfg.hidden_size
        self.n_head = cfg.num_heads
        self.act = cfg.hidden_act
        self.attn_p = cfg.attention_dropout
        self.kind = cfg.layer_types[index]
        # The first layer's input has just been normalised by the embeddings: no second norm there.
        self.attn_norm = _norm(cfg) if index > 0 else nn.Identity()
        self.qkv = nn.Linear(C, 3 * C, bias=False)
        self.attn_out = nn.Linear(C, C, bias=False)
        self.attn_drop = Dropout(cfg.attention_dropout)
        self.mlp_norm = _norm(cfg)
        self.mlp_in = nn.Linear(C, 2 * cfg.intermediate_size, bias=False)  # value half, then gate half
        self.mlp_out = nn.Linear(cfg.intermediate_size, C, bias=False)
        self.mlp_drop = Dropout(cfg.mlp_dropout)

    def forward(self, x: Tensor, mask: Optional[Tensor], rotary: Rotary, rows: Rows, cls_only: bool = False) -> Tensor:
        """Packed states (N, C) -> (N, C); with `cls_only`, the first position of each row alone, (B, C)."""
        q, k, v = project(self.attn_norm(x), self.qkv, rows, self.n_head, cls_only, rotary)  # each (B, H, T, D)
        a = attend(q, k, v, mask, rows, self.attn_p if self.training else 0.0, cls_only)
        if cls_only:
            x = x[rows.firsts]
        x = x + self.attn_drop(self.attn_out(a))
        value, gate = self.mlp_in(self.mlp_norm(x)).chunk(2, dim=-1)  # each (N, I)
        return x + self.mlp_out(self.mlp_drop(gelu(value, self.act) * gate))


class ModernBertModel(nn.Module):
    """The encoder: token ids (B, T) -> final-normed hidden states (B, T, C)."""

    def __init__(self, cfg: ModernBertConfig):
        super().__init__()
        self.config = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.hidden_size, padding_idx=cfg.pad_token_id)
        self.emb_norm = _norm(cfg)
        self.emb_drop = Dropout(cfg.embedding_dropout)
        self.layers = nn.ModuleList(EncoderLayer(cfg, i) for i in range(cfg.num_layers))
        self.final_norm = _norm(cfg)
        D = cfg.hidden_size // cfg.num_heads
        self.rotary = nn.ModuleDict({
            "global": Rotary(D, cfg.global_rope_theta, cfg.max_position_embeddings),
            "local": Rotary(D, cfg.local_rope_theta, cfg.max_position_embeddings),
        })
        _init_weights(self, cfg)

    def masks(self, T: int, attention_mask: Optional[Tensor], device) -> dict[str, Optional[Tensor]]:
        """Boolean SDPA masks (True = may attend) per layer kind; None where nothing is hidden."""
        keys = None
        if attention_mask is not None and not bool(attention_mask.all()):
            keys = attention_mask.bool()[:, None, None, :]  # (B, 1, 1, T): padding keys hidden
        half = self.config.local_window // 2
        local = keys
        if T - 1 > half:
            pos = torch.arange(T, device=device)
            band = (pos[:, None] - pos[None, :]).abs() <= half  # (T, T)
            local = band if keys is None else band & keys        # (T, T) or (B, 1, T, T)
        if keys is not None:
            # A padding query far from every real token would otherwise see no key at all (NaN);
            # letting every query see itself changes nothing at real positions.
            eye = torch.eye(T, dtype=torch.bool, device=device)
            keys = keys | eye
            local = local | eye
        return {"global": keys, "local": local}

    @property
    def token_embeddings(self) -> nn.Embedding:
        return self.tok

    def forward(self, input_ids: Tensor, token_type_ids: Optional[Tensor] = None,
                attention_mask: Optional[Tensor] = None, *, all_layers: bool = False,
                cls_only: bool = False) -> Tensor | list[Tensor]:
        """Final-normed hidden states (B, T, C); token types are accepted and ignored (ModernBERT has
        none). With `all_layers`: [embeddings, layer 1, ..., layer L-1, final-normed layer L]. With
        `cls_only`: the first position's alone, (B, 1, C), the last layer computing nothing else.
        Padding positions hold zeros: the layers run on the real tokens only (tokkit.bert.packing)."""
        B, T = input_ids.shape
        check_length(input_ids, self.config.max_position_embeddings)
        rows = Rows(attention_mask, B, T)
        masks = self.masks(T, attention_mask, input_ids.device)
        x = self.emb_drop(self.emb_norm(self.tok(rows.pack(input_ids))))  # (N, C)
        states = [x]
        for i, layer in enumerate(self.layers):
            x = layer(x, masks[layer.kind], self.rotary[layer.kind], rows, cls_only and i == len(self.layers) - 1)
            states.append(x)
        if cls_only:
            return self.final_norm(x if self.layers else x[rows.firsts])[:, None]
        states[-1] = self.final_norm(x)
        return [rows.unpack(s) for s in states] if all_layers else rows.unpack(states[-1])

    def sentence_vector(self, hidden: Tensor, attention_mask: Optional[Tensor] = None,
                        pooling: str = "cls") -> Tensor:
        """The hidden state at [CLS] ("cls") or the mean over real tokens ("mean"), (B, C)."""
        if pooling == "cls":
            return hidden[:, 0]
        if pooling != "mean":
            raise ValueError(f"pooling must be 'cls' or 'mean', not {pooling!r}")
        if attention_mask is None:
            return hidden.mean(1)
        m = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * m).sum(1) / m.sum(1)


class ModernBertForMaskedLM(nn.Module):
    """ModernBERT with its MLM head: dense -> gelu -> norm -> decoder tied to the token embeddings.

    Takes the same arguments as BertForPreTraining (token types are accepted and ignored) and
    returns the same PreTrainingOutput, with `nsp_logits` None.
    """

    def __init__(self, cfg: ModernBertConfig):
        super().__init__()
        self.config = cfg
        self.encoder = ModernBertModel(cfg)
        self.mlm = MaskedLMHead(cfg.hidden_size, cfg.vocab_size, act=cfg.hidden_act, eps=cfg.norm_eps,
                                bias=False, decoder_bias=cfg.decoder_bias)
        _trunc_normal(self.mlm.transform.dense.weight, cfg.initializer_range / math.sqrt(2 * cfg.num_layers), cfg)

    def mlm_head(self, h: Tensor) -> Tensor:
        """(..., C) hidden states -> (..., V) logits."""
        return self.mlm(h, self.encoder.token_embeddings.weight)

    def forward(self, input_ids: Tensor, token_type_ids: Optional[Tensor] = None,
                attention_mask: Optional[Tensor] = None, labels: Optional[Tensor] = None,
                next_sentence_label: Optional[Tensor] = None) -> PreTrainingOutput:
        if next_sentence_label is not None:
            raise ValueError("ModernBERT has no next-sentence head: train it with the 'mlm' objective")
        hidden = self.encoder(input_ids, None, attention_mask)
        loss, logits, mlm_sum, count = masked_lm(self.mlm_head, hidden, labels)
        return PreTrainingOutput(loss, logits, None, mlm_sum, count, None, hidden)


def _trunc_normal(w: Tensor, std: float, cfg: ModernBertConfig) -> None:
    c = cfg.initializer_cutoff_factor * std
    nn.init.trunc_normal_(w, mean=0.0, std=std, a=-c, b=c)


def _init_weights(model: ModernBertModel, cfg: ModernBertConfig) -> None:
    # ModernBERT's scheme: truncated normals, std 0.02 into each block and the embeddings, and
    # 0.02 / sqrt(2 * layers) on the projections that write back into the residual stream.
    std_in = cfg.initializer_range
    std_out = cfg.initializer_range / math.sqrt(2 * cfg.num_layers)
    with torch.no_grad():
        _trunc_normal(model.tok.weight, std_in, cfg)
        model.tok.weight[cfg.pad_token_id].zero_()
        for layer in model.layers:
            _trunc_normal(layer.qkv.weight, std_in, cfg)
            _trunc_normal(layer.mlp_in.weight, std_in, cfg)
            _trunc_normal(layer.attn_out.weight, std_out, cfg)
            _trunc_normal(layer.mlp_out.weight, std_out, cfg)
