"""Rounds of alternating contenders: the one schedule, clock and median every benchmark uses.

A benchmark runs its contenders in turn, round after round, so a slow spell on a shared
machine touches all of them alike; warm-up rounds come first and are not kept. `turns` is the
schedule (the subprocess and worker timers in `tokkit.bench.harness` follow it too), `time_calls`
times in-process calls on it, and `ratio_line` prints a contender against the baseline.

>>> ticks = iter(range(100))
>>> res = time_calls({"a": lambda: None, "b": lambda: None}, rounds=2, clock=lambda: next(ticks))
>>> res["a"].times, res["b"].median
([1, 1], 1.0)
>>> ratio_line("other", 2.0, 1.0, work=10, unit="MB/s")
'  other                        5.00 MB/s   tokkit 2.00x faster'
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

ORDERS = ("same", "rotate", "reverse")


def median(values) -> float:
    """The median of `values`, or NaN when there are none (a contender that never ran)."""
    values = list(values)
    return statistics.median(values) if values else float("nan")


@dataclass
class Result:
    """Wall times (s) and peak RSS (MB) of repeated runs of one contender."""

    name: str
    times: list = field(default_factory=list)
    rss_mb: list = field(default_factory=list)
    note: str = ""
    cpu_times: list = field(default_factory=list)  # CPU seconds of the same runs (in-process tasks only)
    setup_s: float | None = None  # how long the task's setup took (in-process tasks only)
    summary: dict | None = None  # what the task said about its last run (see tokkit.bench.worker)

    @property
    def median(self) -> float:
        return median(self.times)

    @property
    def cpu_median(self) -> float:
        """Median CPU seconds of a run, all threads of the process summed (a load-independent figure)."""
        return median(self.cpu_times)

    @property
    def peak_rss_mb(self) -> float:
        return max(self.rss_mb) if self.rss_mb else float("nan")

    def as_dict(self) -> dict:
        out = {"name": self.name, "times": self.times, "min": min(self.times, default=None),
               "median": self.median, "max": max(self.times, default=None), "peak_rss_mb": self.peak_rss_mb,
               "note": self.note}
        if self.cpu_times:
            out.update(cpu_times=self.cpu_times, cpu_median=self.cpu_median)
        if self.setup_s is not None:
            out["setup_s"] = self.setup_s
        if self.summary is not None:
            out["summary"] = self.summary
        return out


def round_order(names: list, rnd: int, order: str = "same") -> list:
    """The contenders' order in round `rnd`: always the same, rotated (a new leader each round), or reversed
    every other round (so neither of two contenders always runs right after the other).

    >>> round_order(["a", "b", "c"], 1, "rotate"), round_order(["a", "b"], 1, "reverse")
    (['b', 'c', 'a'], ['b', 'a'])
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    if order == "rotate" and names:
        k = rnd % len(names)
        return names[k:] + names[:k]
    if order == "reverse" and rnd % 2:
        return names[::-1]
    return list(names)


def turns(names: Iterable, *, rounds: int, warmup: int = 1, block: int = 1, block_warmup: int = 0,
          order: str = "same") -> Iterator[tuple[int, str, bool]]:
    """Yield (round, name, timed) for each run: `warmup` untimed rounds, then `rounds` timed ones.

    In each round a contender's turn is a block: `block_warmup` untimed runs, then `block` runs
    (all untimed in a warm-up round); the untimed runs absorb what the previous contender did to
    the caches. `round` counts timed rounds from 1, warm-up rounds are 0.

    >>> [(r, n, t) for r, n, t in turns("ab", rounds=1)]
    [(0, 'a', False), (0, 'b', False), (1, 'a', True), (1, 'b', True)]
    """
    names = list(names)
    for rnd in range(warmup + rounds):
        for name in round_order(names, rnd, order):
            for k in range(block_warmup + block):
                yield max(0, rnd - warmup + 1), name, rnd >= warmup and k >= block_warmup


def timed_once(fn: Callable, *, clock: Callable[[], float] = time.perf_counter) -> tuple[float, object]:
    """(seconds, value) of one call: for work too long to repeat, or timed once by design.

    >>> ticks = iter([5.0, 7.5])
    >>> timed_once(lambda: "done", clock=lambda: next(ticks))
    (2.5, 'done')
    """
    start = clock()
    value = fn()
    return clock() - start, value


def turn_label(rnd: int) -> str:
    """How a progress line names a round: 'warm-up' or 'round N'."""
    return f"round {rnd}" if rnd else "warm-up"


def time_calls(calls: dict[str, Callable], *, rounds: int, warmup: int = 1, block: int = 1,
               block_warmup: int = 0, order: str = "same", pause: float = 0.0, cpu: bool = False,
               clock: Callable[[], float] = time.perf_counter, cpu_clock: Callable[[], float] = time.process_time,
               sleep: Callable[[float], None] = time.sleep, log=None) -> dict[str, Result]:
    """Time zero-argument calls in this process on the `turns` schedule; {name: Result}.

    `pause` seconds pass before each run (idle pool threads of the previous contender stop
    spinning); with `cpu` the CPU seconds of each timed run are kept too.
    """
    results = {name: Result(name) for name in calls}
    for rnd, name, timed in turns(calls, rounds=rounds, warmup=warmup, block=block, block_warmup=block_warmup,
                                  order=order):
        if pause:
            sleep(pause)
        start, cpu_start = clock(), cpu_clock() if cpu else 0.0
        calls[name]()
        seconds = clock() - start
        if timed:
            results[name].times.append(seconds)
            if cpu:
                results[name].cpu_times.append(cpu_clock() - cpu_start)
        if log:
            log(f"  {turn_label(rnd if timed else 0)}: {name}: {seconds:.3f} s")
    return results


def medians(results: dict[str, Result]) -> dict[str, float]:
    """{name: median seconds} of a `time_calls` answer."""
    return {name: res.median for name, res in results.items()}


def speedup(seconds: float, baseline_seconds: float) -> float:
    """How many times faster the baseline is than a contender (its seconds / the baseline's)."""
    if not baseline_seconds or math.isnan(baseline_seconds) or math.isnan(seconds):
        return float("nan")
    return seconds / baseline_seconds


def ratio_line(name: str, seconds: float, baseline_seconds: float | None = None, *, work: float | None = None,
               unit: str = "s", baseline: str = "tokkit", target: float | None = None) -> str:
    """One line of a ratio table: the contender's speed (work / median, or its median), then how many
    times faster the baseline is, and whether that meets `target`."""
    figure = f"{work / seconds:8.2f} {unit}" if work else f"{seconds * 1e3:8.1f} ms"
    line = f"  {name:<24} {figure}"
    if baseline_seconds is not None and name != baseline:
        ratio = speedup(seconds, baseline_seconds)
        line += f"   {baseline} {ratio:.2f}x faster"
        if target is not None:
            line += f" (target >= {target:.1f}x: {'met' if ratio >= target else 'MISSED'})"
    return line
