"""Every setting of a fine-tuning run, checked; saved in its checkpoint so `--resume` continues it.

>>> cfg = FinetuneConfig(task="tag")
>>> cfg.length, round(cfg.schedule(steps=1000).lr(500) / cfg.lr, 4)   # 10% warm-up, then linear decay
(128, 0.5556)
>>> FinetuneConfig(task="classify", lr=-1)
Traceback (most recent call last):
tokkit.errors.TokkitError: lr (--lr) must be a finite number > 0, got -1
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tokkit._shape import MAX_SEED
from tokkit._threads import MAX_THREADS
from tokkit.bert.heads import POOLINGS
from tokkit.bert.tasks import TASKS, Task
from tokkit.bert.schedule import Schedule
from tokkit.bert.settings import check_non_negative, check_positive, check_share, check_whole
from tokkit.errors import TokkitError
from tokkit.labelled.lengths import AUTO

# What torch takes: a seed of 2**64 or 2**63 threads overflow inside it.
BOUNDS = {"seed": MAX_SEED, "threads": MAX_THREADS}


@dataclass
class FinetuneConfig:
    """How a head is trained: its task, how long, how fast, and how it is judged."""

    task: str
    epochs: int = 3
    max_time: Optional[float] = None      # training seconds (evaluation excluded); the run ends at the first bound
    lr: float = 3e-4                      # peak (for tokkit's small encoders; BERT-base-sized ones want ~3e-5);
                                          # warm-up over `warmup` of the run, then linear decay to zero
    batch_size: int = 32
    train_limit: Optional[int] = None     # train on a fixed sample of this many training rows (None: all of them)
    max_length: Optional[int | str] = None  # default: 128, or 384 for question answering; "auto": fitted to
                                          # the training rows (tokkit.labelled.lengths), a number once resolved
    stride: int = 128                     # question answering: tokens two windows of one context share
    warmup: float = 0.1                   # share of the run
    weight_decay: float = 0.01
    clip: float = 1.0
    layer_decay: float = 1.0              # each layer below the top trains at this factor of the lr above it
    freeze_embeddings: int = 0            # steps the embeddings stay at lr 0 while the layers above settle
    seed: int = 0
    pooling: str = "cls"                  # sentence vector: "cls", or "mean" (ModernBERT)
    head_dropout: Optional[float] = None  # None: the architecture's default
    label_all_subtokens: bool = False     # tagging: a word's label on every sub-token, not only its first
    eval_every_seconds: Optional[float] = None  # also evaluate each time training time passes a multiple
    checkpoint_every: int = 0             # steps between resumable checkpoints (0: at each epoch's end only)
    log_every: int = 10
    n_best: int = 20                      # question answering: start and end candidates per window
    max_answer_length: int = 30           # question answering: longest answer, in tokens
    threads: Optional[int] = None
    bf16: Optional[bool] = None           # bfloat16 autocast in the forward pass; None: on where it is fast
    device: Optional[str] = None

    def __post_init__(self):
        if not isinstance(self.task, str) or self.task not in TASKS:
            raise TokkitError(f"task must be one of {list(TASKS)}, not {self.task!r}")
        if self.pooling not in POOLINGS:
            raise TokkitError(f"pooling (--pooling) must be one of {list(POOLINGS)}, not {self.pooling!r}")
        if self.max_length == AUTO and self.kind.windows:  # windows of a long context need a length, not a fit
            *most, last = [t.name for t in TASKS.values() if not t.windows]
            raise TokkitError(f"max_length (--max-length) auto applies to {', '.join(most)} and {last}, "
                              f"not {self.task!r}")
        least = {"epochs": 1, "batch_size": 1, "max_length": 2, "stride": 0, "seed": 0, "checkpoint_every": 0,
                 "log_every": 1, "n_best": 1, "max_answer_length": 1, "threads": 1, "train_limit": 1,
                 "freeze_embeddings": 0}
        if self.max_length == AUTO:
            del least["max_length"]
        check_whole(self, least, optional=("max_length", "threads", "train_limit"), most=BOUNDS)
        check_positive(self, ("lr", "max_time", "eval_every_seconds"))
        check_non_negative(self, ("weight_decay", "clip"))
        check_share(self, ("warmup", "head_dropout"), closed=True)
        if not (0 < self.layer_decay <= 1):
            raise TokkitError(f"layer_decay (--layer-decay) must lie in (0, 1], got {self.layer_decay!r}")
        # Settings of one task given for another would be silently ignored.
        if self.label_all_subtokens and not self.kind.word_labels:
            raise TokkitError(f"label_all_subtokens (--label-all-subtokens) applies to task 'tag', not {self.task!r}")
        if self.pooling != "cls" and not self.kind.sentence:
            raise TokkitError(f"pooling (--pooling) {self.pooling!r} applies to sentence tasks, not {self.task!r}")
        if self.kind.windows and self.stride >= self.length // 2:
            raise TokkitError(f"stride (--stride) {self.stride} must be below half of max_length {self.length}")

    @property
    def length(self) -> int:
        """The longest row, in tokens (after "auto" is resolved)."""
        if self.max_length == AUTO:
            raise TokkitError("max_length auto is resolved against the training rows before use")
        return self.max_length if self.max_length is not None else self.kind.default_length

    @property
    def kind(self) -> Task:
        """The task object (tokkit.bert.tasks)."""
        return TASKS[self.task]

    def schedule(self, steps: int) -> Schedule:
        """Warm-up over `warmup` of the run, linear decay to zero at its end: `steps` (the epochs'
        steps) or `max_time`, whichever comes first."""
        return Schedule(peak=self.lr, steps=steps, seconds=self.max_time, warmup_share=self.warmup)
