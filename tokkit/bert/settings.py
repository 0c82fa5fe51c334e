"""Checks every run's settings share: whole numbers with a least value, finite numbers in a range.

A bad value is one TokkitError naming the setting as the API and the command line spell it.

>>> from dataclasses import dataclass
>>> @dataclass
... class Run:
...     steps: int = 0
>>> check_whole(Run(), {"steps": 1})
Traceback (most recent call last):
tokkit.errors.TokkitError: steps (--steps) must be a whole number >= 1, got 0
"""
from __future__ import annotations

import math
from typing import Iterable, Optional

from tokkit.errors import TokkitError


def whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def option(name: str) -> str:
    """A setting as the API and the command line spell it: "log_every (--log-every)"."""
    return f"{name} (--{name.replace('_', '-')})"


def check_whole(settings, least: dict[str, int], optional: Iterable[str] = (), most: Optional[dict] = None) -> None:
    """Whole-number settings, each at least its value in `least` and at most its value in `most`
    (None allowed for the `optional` ones)."""
    for name, low in least.items():
        value = getattr(settings, name)
        if value is None and name in optional:
            continue
        if not whole(value) or value < low:
            raise TokkitError(f"{option(name)} must be a whole number >= {low}, got {value!r}")
        if most and name in most and value > most[name]:
            raise TokkitError(f"{option(name)} must be a whole number in [{low}, {most[name]}], got {value!r}")


def check_positive(settings, names: Iterable[str]) -> None:
    """Finite numbers > 0, or None (NaN and infinity fail every comparison here)."""
    for name in names:
        value = getattr(settings, name)
        if value is not None and not (finite(value) and value > 0):
            raise TokkitError(f"{option(name)} must be a finite number > 0, got {value!r}")


def check_non_negative(settings, names: Iterable[str]) -> None:
    for name in names:
        value = getattr(settings, name)
        if not (finite(value) and value >= 0):
            raise TokkitError(f"{option(name)} must be a finite number >= 0, got {value!r}")


def check_share(settings, names: Iterable[str], *, closed: bool = False) -> None:
    """Numbers strictly between 0 and 1 (or in [0, 1) with `closed`), or None."""
    for name in names:
        p = getattr(settings, name)
        if p is not None and not (finite(p) and (0 <= p if closed else 0 < p) and p < 1):
            interval = "in [0, 1)" if closed else "strictly between 0 and 1"
            raise TokkitError(f"{option(name)} must lie {interval}, got {p!r}")
