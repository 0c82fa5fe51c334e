"""The files a training run keeps beside its model: metrics.jsonl, a chart, and the model folder itself.

`Metrics` appends one JSON line per record (a resumed run first cuts the file back to its
checkpoint); `publish` replaces the model's files in a run folder atomically while keeping
everything else there; `plot_curve` draws a fine-tuning run's loss and metric.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "metrics.jsonl"
>>> m = Metrics(path, True, 0); m.write({"step": 1, "loss": 2.5}); m.write({"step": 2, "loss": 2.0})
>>> _ = Metrics(path, True, start_step=1)   # a run resumed at step 1 keeps the lines up to it
>>> print(path.read_text(), end="")
{"loss": 2.5, "step": 1}
"""
from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Optional

from tokkit._charts import _pyplot, _save, have_matplotlib
from tokkit._files import FolderLock, atomic_dir, replace_folder, temporary_beside
from tokkit.bert.folders import TOKENIZER_FILES
from tokkit.bert.hf import write_hf

log = logging.getLogger(__name__)
MODEL_FILES = {"config.json", "model.safetensors"} | TOKENIZER_FILES


def _step_of(line: str) -> Optional[int]:
    """The step of one metrics.jsonl line, or None for a line that is not a metrics record (dropped)."""
    try:
        rec = json.loads(line)
    except json.JSONDecodeError:
        return None
    step = rec.get("step") if isinstance(rec, dict) else None
    return step if isinstance(step, int) and not isinstance(step, bool) else None


class Metrics:
    """metrics.jsonl, appended line by line; a resumed run first drops lines past its checkpoint."""

    def __init__(self, path: Path, enabled: bool, start_step: int):
        self.path = path
        self.enabled = enabled
        if enabled:
            keep = []
            if start_step and path.exists():
                keep = [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()
                        if _step_of(ln) is not None and _step_of(ln) <= start_step]
            path.write_text("".join(ln + "\n" for ln in keep), encoding="utf-8")

    def write(self, rec: dict) -> None:
        if self.enabled:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(rec, sort_keys=True) + "\n")




def held_run(out: Path, prepare):
    """`prepare(holds)` with OUT's lock held by rank 0 (a second run into OUT is refused; `holds` says
    whether this process holds it): the run it returns keeps the lock in `run.lock`; a failed
    `prepare` gives the lock back."""
    lock = FolderLock(out) if os.environ.get("RANK", "0") == "0" else None  # rank 0 writes; it holds OUT
    try:
        run = prepare(lock is not None)
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    run.lock = lock
    return run


def staging_folder(out: Path, main: bool, fresh: bool) -> Path:
    """Where a run writes until it has something to keep: a new folder beside OUT for a fresh run
    (rank 0), so OUT holds the earlier run, or nothing, until keep_folder; OUT itself otherwise."""
    if main and fresh:
        return Path(temporary_beside(out))
    if main:
        out.mkdir(parents=True, exist_ok=True)
    return out


def keep_folder(folder: Path, out: Path, metrics: Optional[Metrics] = None) -> Path:
    """The run has something to keep: `folder` takes OUT's place in one step (the earlier run's files
    go with the old OUT); returns OUT, where the run writes from now on."""
    if folder != out:
        replace_folder(folder, out)
        if metrics is not None:
            metrics.path = out / "metrics.jsonl"
    return out


def drop_folder(folder: Optional[Path], out: Path) -> None:
    """After a run stopped before keeping anything: its folder beside OUT is removed, OUT untouched."""
    if folder is not None and folder != out and folder.exists():
        shutil.rmtree(folder, ignore_errors=True)


def publish(folder, model, tokenizer, *, settings: Optional[dict] = None) -> Path:
    """Make `folder` a transformers folder of `model` and `tokenizer`, replacing its model files
    in one step and keeping its other entries (metrics, checkpoint/): they are hard-linked into the
    new folder, which then takes the old one's place atomically. `settings` go into config.json
    under "tokkit" (what reading the model's inputs back needs)."""
    folder = Path(folder)
    with atomic_dir(folder, marker_files=MODEL_FILES, force=True) as tmp:
        write_hf(model, tokenizer, tmp)
        if settings is not None:
            path = Path(tmp) / "config.json"
            config = json.loads(path.read_text(encoding="utf-8"))
            path.write_text(json.dumps({**config, "tokkit": settings}, indent=2, sort_keys=True), encoding="utf-8")
        if folder.is_dir():
            for entry in folder.iterdir():
                if entry.name not in MODEL_FILES and not (Path(tmp) / entry.name).exists():
                    _link_tree(entry, Path(tmp) / entry.name)
    return folder


def _link_tree(src: Path, dst: Path) -> None:
    """Hard links of `src`'s files at `dst` (a copy where the file system has none)."""
    if src.is_dir():
        dst.mkdir()
        for entry in src.iterdir():
            _link_tree(entry, dst / entry.name)
        return
    try:
        os.link(src, dst)
    except OSError:
        dst.write_bytes(src.read_bytes())


def plot_curve(metrics_path, png_path) -> Optional[Path]:
    """Training loss by step and the evaluation metric by step, side by side; None without matplotlib."""
    if not have_matplotlib():
        log.warning("matplotlib is not installed: no training chart (metrics.jsonl has the numbers)")
        return None
    records = [json.loads(line) for line in Path(metrics_path).read_text(encoding="utf-8").splitlines() if line]
    train = [r for r in records if r.get("kind") == "train"]
    evals = [r for r in records if r.get("kind") == "eval"]
    if not train:
        return None
    plt = _pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax1.plot([r["step"] for r in train], [r["loss"] for r in train], lw=0.8, label="training loss")
    ax1.set_xlabel("step")
    ax1.set_ylabel("loss")
    ax1.legend()
    if evals:
        name = evals[-1].get("metric", "metric")
        ax2.plot([r["step"] for r in evals], [r["metric_value"] for r in evals], "o-", color="C3",
                 label=f"evaluation {name}")
        ax2.legend()
    ax2.set_xlabel("step")
    fig.tight_layout()
    _save(fig, str(png_path))
    plt.close(fig)
    return Path(png_path)
