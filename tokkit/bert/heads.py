"""Task heads on one encoder seam: sentence classification and regression, word tagging, answer spans.

Every head reads the hidden states (B, T, C) that both encoders (`BertModel`, `ModernBertModel`)
return from the same call, `encoder(input_ids, token_type_ids, attention_mask)`. A head is the
shape transformers gives the same task, so a fine-tuned model saves to a folder its Auto class
loads: BERT's heads are dropout -> linear (on the pooled [CLS] vector for sentences), ModernBERT's
are its prediction head (dense -> act -> norm) -> dropout -> linear (on the [CLS] or mean vector).
The masked-LM and NSP heads of pretraining live with their models (model.py, modernbert.py).

>>> import torch
>>> from tokkit.bert.modernbert import ModernBertConfig
>>> cfg = ModernBertConfig(vocab_size=50, hidden_size=16, num_heads=2, intermediate_size=24, num_layers=2)
>>> model = TaskModel(cfg, HeadConfig("classify", labels=("fresh", "rotten")))
>>> out = model(torch.randint(5, 50, (3, 7)), labels=torch.tensor([0, 1, 1]))
>>> out.logits.shape, out.loss.ndim
(torch.Size([3, 2]), 0)
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import NamedTuple, Optional, Union

import torch
from torch import Tensor, nn

from tokkit.bert.blocks import Dropout, Transform
from tokkit.bert.model import BertConfig, BertModel
from tokkit.bert.modernbert import ModernBertConfig, ModernBertModel
from tokkit.bert.tasks import TASKS, Task, task

POOLINGS = ("cls", "mean")
IGNORE_INDEX = -100
EncoderConfig = Union[BertConfig, ModernBertConfig]


def arch_of(config: EncoderConfig) -> str:
    """"bert" or "modernbert", the architecture a config describes."""
    return "modernbert" if isinstance(config, ModernBertConfig) else "bert"


def build_encoder(config: EncoderConfig) -> nn.Module:
    """The encoder a config describes, freshly initialised."""
    return ModernBertModel(config) if isinstance(config, ModernBertConfig) else BertModel(config)


@dataclass(frozen=True)
class HeadConfig:
    """What a task head predicts.

    `labels` names the classes of "classify" and the tags of "tag", in id order; "regress" predicts
    one number and "qa" a start and an end logit per token. `pooling` is the sentence vector of
    "classify"/"regress" ("mean" for ModernBERT only: BERT pools through its [CLS] pooler).
    `dropout` before the final linear layer: None means BERT's hidden dropout, ModernBERT's 0.

    >>> HeadConfig("tag", labels=("nn", "vb")).outputs
    2
    """

    task: str
    labels: tuple = field(default=())
    pooling: str = "cls"
    dropout: Optional[float] = None

    def __post_init__(self):
        object.__setattr__(self, "labels", tuple(str(x) for x in self.labels))
        least = task(self.task).min_labels
        if len(self.labels) < least:
            raise ValueError(f"a {self.task} head needs {'two labels' if least == 2 else 'a tag'} "
                             f"at least, got {list(self.labels)}")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"labels repeat: {list(self.labels)}")
        if self.pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {list(POOLINGS)}, not {self.pooling!r}")
        if self.dropout is not None and not 0 <= self.dropout < 1:
            raise ValueError(f"head dropout must be in [0, 1), got {self.dropout}")

    @property
    def kind(self) -> Task:
        """The task object (tokkit.bert.tasks)."""
        return TASKS[self.task]

    @property
    def outputs(self) -> int:
        """Width of the final linear layer."""
        return self.kind.outputs(self)

    def to_dict(self) -> dict:
        return {**asdict(self), "labels": list(self.labels)}

    @classmethod
    def from_dict(cls, d: dict) -> "HeadConfig":
        unknown = sorted(set(d) - {"task", "labels", "pooling", "dropout"})
        if unknown:
            raise ValueError(f"unknown head setting {unknown[0]!r}")
        return cls(**d)


class TaskOutput(NamedTuple):
    loss: Optional[Tensor]  # mean over the labelled rows, tokens or spans; None without labels
    logits: Tensor          # classify (B, n), regress (B,), tag (B, T, n) (with labels: (labelled tokens, n)),
                            # qa (B, T, 2): start, end


class TaskHead(nn.Module):
    """transform (ModernBERT's prediction head; none for BERT) -> dropout -> linear."""

    def __init__(self, config: EncoderConfig, head: HeadConfig):
        super().__init__()
        C = config.hidden_size
        modern = arch_of(config) == "modernbert"
        self.transform = Transform(C, act=config.hidden_act, eps=config.norm_eps, bias=False) if modern \
            else nn.Identity()
        default = 0.0 if modern else head.kind.bert_head_dropout
        p = head.dropout if head.dropout is not None else (config.dropout if default is None else default)
        self.drop = Dropout(p)
        self.classifier = nn.Linear(C, head.outputs)
        _init_head(self, config)

    def forward(self, h: Tensor) -> Tensor:
        return self.classifier(self.drop(self.transform(h)))


class TaskModel(nn.Module):
    """An encoder and one task head: `model(input_ids, token_type_ids, attention_mask, labels=...)`.

    Labels: class ids (B,) for "classify", numbers (B,) for "regress", tag ids (B, T) with -100
    where no word starts for "tag", and (B, 2) start and end token positions for "qa".
    """

    def __init__(self, config: EncoderConfig, head: HeadConfig):
        super().__init__()
        if head.pooling != "cls" and arch_of(config) == "bert":
            raise ValueError("BERT pools sentences through its [CLS] pooler: use pooling='cls'")
        self.config = config
        self.encoder = build_encoder(config)
        self.head = TaskHead(config, head)
        self.head_config = replace(head, dropout=self.head.drop.p)  # the dropout in force, written to config.json

    @property
    def task(self) -> str:
        return self.head_config.task

    def forward(self, input_ids: Tensor, token_type_ids: Optional[Tensor] = None,
                attention_mask: Optional[Tensor] = None, labels: Optional[Tensor] = None) -> TaskOutput:
        sentence = self.head_config.kind.sentence
        # A [CLS] classifier asks the last layer for that one position only.
        cls_only = sentence and self.head_config.pooling == "cls"
        hidden = self.encoder(input_ids, token_type_ids, attention_mask, cls_only=cls_only)  # (B, T or 1, C)
        if sentence:
            hidden = self.encoder.sentence_vector(hidden, attention_mask, self.head_config.pooling)  # (B, C)
        return TaskOutput(*self.head_config.kind.forward(self.head, hidden, labels))


def task_loss(name: str, logits: Tensor, labels: Tensor) -> Tensor:
    """The loss transformers' heads use for task `name`: cross-entropy (ignoring -100), MSE, or the
    mean of the start and end cross-entropies (positions outside the row ignored)."""
    return task(name).loss(logits, labels)


def _init_head(head: TaskHead, config: EncoderConfig) -> None:
    # BERT: N(0, 0.02) and zero biases. ModernBERT: truncated normals, the transform as a block's
    # output projection, the classifier at 1/sqrt(C), as its own initialisation does.
    std = config.initializer_range
    with torch.no_grad():
        if arch_of(config) == "bert":
            nn.init.normal_(head.classifier.weight, std=std)
        else:
            cut = config.initializer_cutoff_factor
            out = std / math.sqrt(2 * config.num_layers)
            nn.init.trunc_normal_(head.transform.dense.weight, std=out, a=-cut * out, b=cut * out)
            final = config.hidden_size ** -0.5
            nn.init.trunc_normal_(head.classifier.weight, std=final, a=-cut * final, b=cut * final)
        nn.init.zeros_(head.classifier.bias)
