"""Replaced-token detection (ELECTRA): a small generator fills the masked positions, the encoder learns
which tokens were replaced, at every position.

A masked-LM encoder learns from the 15-30% of positions it predicts; a discriminator learns from
all of them, which makes it the more sample-efficient objective at small budgets (Clark et al.,
2020). The generator is a shallow masked LM (`generator_layers` layers of the encoder's width)
that reads the encoder's own embeddings and ties its decoder to them; its predictions, sampled at
the masked positions, make the corrupted text the encoder (the discriminator) reads. The loss is
the generator's MLM loss plus `rtd_weight` times the mean binary cross-entropy of "replaced?"
over the real tokens. The encoder is what a run exports and what fine-tuning starts from.

>>> import torch
>>> from tokkit.bert.modernbert import ModernBertConfig
>>> model = Electra(ModernBertConfig(vocab_size=60, hidden_size=16, num_heads=2, intermediate_size=24,
...                                  num_layers=2))
>>> ids = torch.randint(5, 60, (2, 9)); labels = torch.full((2, 9), -100); labels[:, 4] = ids[:, 4]
>>> out = model(ids.masked_fill(labels != -100, 4), labels=labels)
>>> out.rtd_loss.ndim, sorted(n.split(".")[0] for n, _ in model.named_children())
(0, ['encoder', 'generator', 'mlm', 'rtd'])
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tokkit.bert.blocks import MaskedLMHead, Transform
from tokkit.bert.model import PreTrainingOutput
from tokkit.bert.heads import build_encoder
from tokkit.bert.modernbert import ModernBertConfig
from tokkit.bert.sparse import IGNORE_INDEX, sparse_mlm_loss

RTD_WEIGHT = 50.0  # ELECTRA's weight of the discriminator's loss against the generator's


def _shared_embeddings(generator: nn.Module, encoder: nn.Module) -> None:
    """Make the generator read the encoder's token embeddings: referenced, not owned, so the weights
    are trained once, saved once, and the generator adds none of its own."""
    del generator._modules["tok"]
    object.__setattr__(generator, "tok", encoder.tok)


class Electra(nn.Module):
    """The encoder (discriminator), a shallow generator sharing its embeddings, and the "replaced?" head.

    Takes the arguments BertForPreTraining takes (the masked ids and their labels) and returns a
    PreTrainingOutput: the generator's MLM figures, and `rtd_loss`, already weighted.
    """

    def __init__(self, cfg: ModernBertConfig, generator_layers: int = 1, rtd_weight: float = RTD_WEIGHT):
        super().__init__()
        if not isinstance(cfg, ModernBertConfig):
            raise ValueError("replaced-token detection trains ModernBERT encoders (--arch modernbert)")
        self.config = cfg
        self.generator_layers = generator_layers
        self.rtd_weight = rtd_weight
        self.encoder = build_encoder(cfg)
        self.generator = build_encoder(replace(cfg, num_layers=generator_layers))
        _shared_embeddings(self.generator, self.encoder)
        self.mlm = MaskedLMHead(cfg.hidden_size, cfg.vocab_size, act=cfg.hidden_act, eps=cfg.norm_eps, bias=False,
                                decoder_bias=True)
        self.rtd = nn.Sequential(Transform(cfg.hidden_size, act=cfg.hidden_act, eps=cfg.norm_eps, bias=False),
                                 nn.Linear(cfg.hidden_size, 1))

    def mlm_head(self, h: Tensor) -> Tensor:
        return self.mlm(h, self.encoder.token_embeddings.weight)

    def forward(self, input_ids: Tensor, token_type_ids: Optional[Tensor] = None,
                attention_mask: Optional[Tensor] = None, labels: Optional[Tensor] = None,
                next_sentence_label: Optional[Tensor] = None) -> PreTrainingOutput:
        if next_sentence_label is not None:
            raise ValueError("replaced-token detection has no next-sentence head")
        generated = self.generator(input_ids, token_type_ids, attention_mask)  # (B, T, C)
        if labels is None:
            return PreTrainingOutput(None, self.mlm_head(generated), None, None, None, None, generated)
        loss, logits, mlm_sum, count = sparse_mlm_loss(self.mlm_head, generated, labels)  # logits (N, V)
        corrupted, replaced = self.corrupt(input_ids, labels, logits)
        hidden = self.encoder(corrupted, token_type_ids, attention_mask)
        real = attention_mask.bool() if attention_mask is not None else torch.ones_like(replaced)
        scores = self.rtd(hidden[real]).squeeze(-1)  # (real tokens,)
        rtd = self.rtd_weight * F.binary_cross_entropy_with_logits(scores.float(), replaced[real].float())
        return PreTrainingOutput(loss + rtd, logits, None, mlm_sum, count, None, hidden, rtd)

    @torch.no_grad()
    def corrupt(self, input_ids: Tensor, labels: Tensor, logits: Tensor) -> tuple[Tensor, Tensor]:
        """The original text with each labelled position replaced by a draw from the generator, and
        where the result differs from the original (a draw of the original token is no replacement)."""
        chosen = labels != IGNORE_INDEX
        original = torch.where(chosen, labels, input_ids)
        draws = torch.multinomial(torch.softmax(logits.float(), dim=-1), 1).squeeze(1)  # (N,)
        corrupted = original.clone()
        corrupted[chosen] = draws.to(corrupted.dtype)
        return corrupted, corrupted != original
