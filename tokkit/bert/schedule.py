"""The learning-rate schedule of pretraining and fine-tuning: linear warm-up, then linear decay to zero.

A run is bounded by steps, by training time, or by both, and ends at whichever bound it reaches
first; its progress is the larger of the two fractions, so a run bounded by time is planned in
time whatever step bound it also has. The warm-up lasts `warmup_steps` steps, `warmup_seconds`
seconds, or by default `warmup_share` of the run's progress; the decay reaches zero as the run ends.

>>> s = Schedule(peak=1e-3, steps=100, warmup_steps=10)
>>> round(s.lr(0), 6), round(s.lr(10), 6), round(s.lr(55), 6)
(0.0001, 0.001, 0.0005)
>>> t = Schedule(peak=1e-3, steps=100_000, seconds=600)   # 600 s come first: planned in time
>>> round(t.lr(1_000, seconds=300), 6)
0.000526
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Schedule:
    """Linear warm-up to `peak`, then linear decay to zero at the end of the run."""

    peak: float
    steps: Optional[int] = None       # the run's step bound (None: none)
    seconds: Optional[float] = None   # the run's bound in training seconds (None: none)
    warmup_steps: Optional[int] = None
    warmup_seconds: Optional[float] = None
    warmup_share: float = 0.05

    def __post_init__(self):
        if self.steps is None and self.seconds is None:
            raise ValueError("a schedule needs a step bound, a time bound or both")

    def progress(self, step: int, seconds: float = 0.0) -> float:
        """How far the run is, 0 to 1: the larger of its fractions of steps and of time."""
        p = step / self.steps if self.steps else 0.0
        if self.seconds:
            p = max(p, seconds / self.seconds)
        return min(1.0, p)

    def warm(self, step: int, seconds: float = 0.0) -> float:
        """The warm-up factor, 0 to 1 (1 once the warm-up is over)."""
        if self.warmup_steps is not None:
            w = (step + 1) / self.warmup_steps if self.warmup_steps else 1.0
        elif self.warmup_seconds:
            w = max(seconds, 1e-3) / self.warmup_seconds
        elif self.warmup_share:
            w = max(self.progress(step + 1, seconds), 1e-9) / self.warmup_share
        else:
            w = 1.0
        return min(1.0, w)

    def planned_warmup_share(self) -> float:
        """The share of the run the warm-up takes, as planned: in time when the run has a time bound."""
        if self.seconds:
            return self.warmup_seconds / self.seconds if self.warmup_seconds else self.warmup_share
        if self.warmup_steps is not None:
            return self.warmup_steps / self.steps
        return self.warmup_share

    def lr(self, step: int, seconds: float = 0.0) -> float:
        """The learning rate of step `step` taken after `seconds` of training."""
        decay = (1.0 - self.progress(step, seconds)) / max(1e-9, 1.0 - self.planned_warmup_share())
        return self.peak * max(0.0, min(1.0, self.warm(step, seconds), decay))
