"""Run contenders side by side: each in its own subprocess, timed whole, peak RSS of its process tree.

Contenders alternate (a warm-up round first, then `repeat` rounds), so a slow spell on a shared
machine hits all of them alike; we report min / median / max and ratios of medians.

>>> r = measure_command([sys.executable, "-c", "pass"], repeat=1, warmup=False)
>>> r.median > 0 and r.peak_rss_mb > 0
True
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field


@dataclass
class Result:
    """Wall times (s) and peak RSS (MB) of repeated runs of one contender."""

    name: str
    times: list = field(default_factory=list)
    rss_mb: list = field(default_factory=list)
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")

    @property
    def peak_rss_mb(self) -> float:
        return max(self.rss_mb) if self.rss_mb else float("nan")

    def as_dict(self) -> dict:
        return {"name": self.name, "times": self.times, "min": min(self.times, default=None),
                "median": self.median, "max": max(self.times, default=None), "peak_rss_mb": self.peak_rss_mb,
                "note": self.note}


def tree_rss(proc) -> int:
    """Resident memory of a psutil.Process and all its descendants, in bytes."""
    import psutil

    total = 0
    try:
        procs = [proc] + proc.children(recursive=True)
    except psutil.Error:
        return 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def run_once(cmd: list[str], *, env: dict | None = None, cwd: str | None = None, timeout: float = 3600.0,
             interval: float = 0.02) -> tuple[float, float]:
    """Run `cmd`; return (wall seconds, peak RSS of the process tree in MB). Raises on failure."""
    import psutil

    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ps = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(ps))
        if time.perf_counter() - start > timeout:
            proc.kill()
            raise TimeoutError(f"{cmd[0]} ran longer than {timeout} s")
        time.sleep(interval)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{err[-2000:]}")
    return wall, peak / 1e6


def measure_command(cmd, *, repeat=3, warmup=True, env=None, name="", cwd=None) -> Result:
    """Warm up once (optional), then run `repeat` times."""
    result = Result(name or os.path.basename(cmd[0]))
    if warmup:
        run_once(cmd, env=env, cwd=cwd)
    for _ in range(repeat):
        wall, rss = run_once(cmd, env=env, cwd=cwd)
        result.times.append(wall)
        result.rss_mb.append(rss)
    return result


def measure_alternating(commands: dict[str, list[str]], *, repeat=3, env=None, cwd=None, log=None) -> dict[str, Result]:
    """Warm every command up once, then run them in turn `repeat` times."""
    results = {name: Result(name) for name in commands}
    for rnd in range(repeat + 1):
        for name, cmd in commands.items():
            if results[name].note:
                continue
            try:
                wall, rss = run_once(cmd, env=env, cwd=cwd)
            except (RuntimeError, TimeoutError) as exc:
                results[name].note = f"failed: {str(exc).splitlines()[0]}"
                continue
            if rnd > 0:
                results[name].times.append(wall)
                results[name].rss_mb.append(rss)
            if log:
                log(f"  {'warm-up' if rnd == 0 else f'round {rnd}'}: {name}: {wall:.2f} s, {rss:.0f} MB")
    return results


def python_cmd(code: str) -> list[str]:
    """A command running `code` in a fresh interpreter (the same one running the harness)."""
    return [sys.executable, "-c", code]
