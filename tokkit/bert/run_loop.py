"""One run skeleton for pretraining and fine-tuning: set-up, the step loop, evaluation, checkpoints, the summary.

A run is its output folder held (`hold`), an objective's set-up, then `execute`: steps until the
objective has none left or the time budget is spent, the objective's evaluations and checkpoints
after each step, its summary, and the run folder let go whatever happened. The objective
(`tokkit.bert.train`'s masked-LM / NSP / ELECTRA pretraining, `tokkit.bert.finetune_run`'s task
heads) says what a step is and what follows it; the skeleton does what both do alike: the timing of
a step, the learning rate of each parameter group, the divergence checks, the clock of timed
evaluations, the stop that every rank takes at the same step, the checkpoint written and kept, and
summary.json with its chart.

>>> clock = Clock(every=10.0, now=25.0)
>>> clock.passed(29.0), clock.passed(31.0), clock.passed(35.0)
(False, True, False)
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import torch

from tokkit._files import FolderLock, atomic_write, check_destination
from tokkit._progress import Progress
from tokkit.bert import checkpoint as ckpt
from tokkit.bert.ddp import finish_distributed
from tokkit.bert.run_files import Metrics, drop_folder, held_run, keep_folder, staging_folder
from tokkit.errors import TokkitError

try:
    import resource  # Unix only
except ImportError:
    resource = None

__all__ = ["Run", "Objective", "Clock", "hold", "execute", "open_output", "timed_step", "save_checkpoint", "keep",
           "write_summary", "check_run_output", "rss_mb", "peak_rss_mb", "say"]


@dataclass
class Run:
    """What every run holds between its steps; an objective's run adds its own fields."""

    cfg: object
    out: Path
    tok: object
    device: torch.device
    rank: int
    world: int
    model: torch.nn.Module
    trained: torch.nn.Module  # the model, wrapped for DistributedDataParallel when there are several ranks
    opt: torch.optim.Optimizer
    step: int = 0             # steps done
    train_time: float = 0.0   # seconds of training (evaluation and checkpoints excluded)
    last_eval: Optional[dict] = None
    metrics: Optional[Metrics] = None
    bar: Optional[Progress] = None
    dir: Optional[Path] = None  # where the files go now: beside `out` until the first keep (run_files)
    lock: Optional[FolderLock] = None  # rank 0 holds the run folder: a second run into it is refused

    @property
    def main(self) -> bool:
        return self.rank == 0


class Objective:
    """What a kind of run trains: its steps and what follows each. The methods a subclass fills in."""

    checks_time_first = False  # whether a run begun past its time budget takes no step at all

    def more(self, run: Run) -> bool:
        """Whether a step is left."""
        raise NotImplementedError

    def step(self, run: Run) -> dict:
        """One optimizer step (through `timed_step`); its stats, "loss" among them."""
        raise NotImplementedError

    def after_step(self, run: Run, stats: dict, *, over: bool, timed: bool) -> None:
        """Logging, evaluations and checkpoints after a step; `over`: the time budget is spent,
        `timed`: training time passed a multiple of eval_every_seconds."""
        raise NotImplementedError

    def finish(self, run: Run) -> dict:
        """The last checkpoint and evaluation, and the summary (`write_summary`)."""
        raise NotImplementedError

    def diverged(self, run: Run, what: str) -> TokkitError:
        """The error of a run whose loss or weights are no longer finite."""
        return TokkitError(f"training diverged at step {run.step}: {what} (try a lower --lr)")


# ---------------------------------------------------------------------------------------- set-up
def hold(out: Path, prepare: Callable[[bool], Run]) -> Run:
    """`prepare(holds)` with OUT held by rank 0 (run_files.held_run) and checked as a destination:
    never the current folder, home, /tmp or a mount, since the run replaces it as a whole."""
    def checked(holds: bool) -> Run:
        check_destination(out, marker_files=(), force=True)
        return prepare(holds)

    return held_run(out, checked)


def open_output(run: Run, *, fresh: bool, total: Optional[int], desc: str, progress) -> None:
    """The run folder (a new one beside OUT when `fresh`), metrics.jsonl cut back to the run's step, the bar."""
    run.dir = staging_folder(run.out, run.main, fresh=fresh)
    run.metrics = Metrics(run.dir / "metrics.jsonl", run.main, run.step)
    run.bar = Progress(total=total, desc=desc, unit=" steps", enabled=progress if run.main else False)
    run.bar.set(run.step)


# ---------------------------------------------------------------------------------------- the loop
class Clock:
    """When training time passes the next multiple of `every` seconds (timed evaluations); never without `every`."""

    def __init__(self, every: Optional[float], now: float):
        self.every = every
        self.next = self._after(now) if every else None

    def _after(self, now: float) -> float:
        return (int(now // self.every) + 1) * self.every

    def passed(self, now: float) -> bool:
        if self.next is None or now < self.next:
            return False
        self.next = self._after(now)
        return True


def execute(run: Run, objective: Objective) -> dict:
    """Train `run` to its end and return the objective's summary; the run's folder is let go
    however it ends (a folder never kept is removed, OUT's lock released)."""
    try:
        _train(run, objective)
        return objective.finish(run)
    finally:
        drop_folder(run.dir, run.out)
        if run.lock is not None:
            run.lock.release()


def _train(run: Run, objective: Objective) -> None:
    """Steps while the objective has them and the time budget lasts; what follows each step."""
    clock = Clock(run.cfg.eval_every_seconds, run.train_time)
    run.trained.train()
    try:
        if objective.checks_time_first and _everyone_stops(run, _over(run)):
            return
        while objective.more(run):
            stats = objective.step(run)
            if not math.isfinite(stats["loss"]):
                raise objective.diverged(run, f"the loss is {stats['loss']}")
            over = _over(run)
            objective.after_step(run, stats, over=over, timed=clock.passed(run.train_time))
            if _everyone_stops(run, over):
                break
    finally:
        run.bar.close()


def _over(run: Run) -> bool:
    return run.cfg.max_time is not None and run.train_time >= run.cfg.max_time


def _everyone_stops(run: Run, over: bool) -> bool:
    """Whether to stop now; with several ranks rank 0's clock decides, so every rank stops at the same step."""
    if run.world > 1:
        flag = torch.tensor([float(over)])
        torch.distributed.broadcast(flag, 0)
        over = bool(flag.item())
    return over


def timed_step(run: Run, draw: Callable[[], dict], lr: float, update: Callable[[dict], object]):
    """One optimizer step: the batch drawn, each parameter group's lr set (`lr` times its
    `lr_scale`, or 0 while the step is below its `frozen_steps`), `update(batch)` run; all of it counts
    as training time. Returns what `update` returns."""
    t0 = time.perf_counter()
    batch = draw()
    for group in run.opt.param_groups:
        frozen = run.step < group.get("frozen_steps", 0)
        group["lr"] = 0.0 if frozen else lr * group.get("lr_scale", 1.0)
    stats = update(batch)
    run.train_time += time.perf_counter() - t0
    run.step += 1
    return stats


# ---------------------------------------------------------------------------------------- checkpoints, summary
def save_checkpoint(run: Run, objective: Objective, state: dict) -> bool:
    """RUN/checkpoint/ with `state` (rank 0), once every rank has checked that the weights are
    finite (they are the same everywhere, so all stop together). Returns whether it was written."""
    if not all(bool(torch.isfinite(p).all()) for p in run.model.parameters()):
        raise objective.diverged(run, "the weights are no longer finite")
    if not run.main:
        return False
    ckpt.save_checkpoint(run.dir / "checkpoint", run.model, run.opt, state, tokenizer=run.tok)
    return True


def keep(run: Run) -> None:
    """The run has something to keep: its folder takes OUT's place (once), the earlier run's files gone."""
    if run.main:
        run.dir = keep_folder(run.dir, run.out, run.metrics)


def write_summary(run: Run, summary: dict, chart: str, plot) -> dict:
    """summary.json and the chart of metrics.jsonl (`plot(metrics, png)`, named under `chart`) on
    rank 0; the process group closed. Returns the summary."""
    if run.main:
        png = plot(run.out / "metrics.jsonl", run.out / f"{chart}.png")
        summary[chart] = str(png) if png else None
        atomic_write(run.out / "summary.json", json.dumps(summary, indent=1, sort_keys=True))
    if run.world > 1:
        finish_distributed()
    return summary


def check_run_output(output, *, resume=None, force: bool = False) -> Path:
    """Refuse an output folder that would lose work: an earlier run needs `resume` or `force`,
    anything else in it needs `force`; a file is refused.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); os.mkdir(os.path.join(d, "checkpoint"))
    >>> check_run_output(d)
    Traceback (most recent call last):
    tokkit.errors.TokkitError: ... holds an earlier run: continue it with --resume ... or replace it with --force
    """
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise TokkitError(f"{out}: output path is a file, not a folder")
    if force or not out.is_dir() or not any(out.iterdir()):
        return out
    if (out / "checkpoint").exists():
        if resume is not None and Path(resume).resolve() in (out.resolve(), (out / "checkpoint").resolve()):
            return out
        raise TokkitError(f"{out} holds an earlier run: continue it with --resume {out} or replace it with --force")
    if (out / "metrics.jsonl").exists():
        raise TokkitError(f"{out} holds an earlier run that saved no checkpoint: replace it with --force")
    raise TokkitError(f"{out}: folder is not empty and holds no tokkit run; use --force to write into it")


# ---------------------------------------------------------------------------------------- helpers
def rss_mb() -> Optional[float]:
    """This process's resident memory in MB (Linux), None elsewhere."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def peak_rss_mb() -> Optional[float]:
    """The most resident memory this process has held, in MB (Unix), None elsewhere."""
    if resource is None:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def say(bar, line: str) -> None:
    """A line on stderr above the progress bar (which redraws itself on its next update)."""
    if bar.enabled:
        sys.stderr.write("\r" + " " * 119 + "\r")
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
