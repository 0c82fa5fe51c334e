"""Resuming a fine-tuning run: what its checkpoint must hold, the settings it keeps, the state restored from it.

A resume continues the run saved in OUT/checkpoint/ exactly: the same task, training sample,
files (by their sha256) and fields, the checkpoint's settings except those that say how long and
where to run, then its optimizer, position, evaluations and RNG state. An edited or foreign
state.json is one error naming the field.

>>> sha256(__file__) == sha256(__file__)
True
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from tokkit.bert import checkpoint as ckpt
from tokkit.bert.finetune_config import FinetuneConfig
from tokkit.bert.heads import HeadConfig
from tokkit.bert.settings import finite, whole
from tokkit.errors import TokkitError

__all__ = ["sha256", "resume_state", "resumed_config", "restore"]


def sha256(path) -> str:
    """The hex sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def resume_state(out: Path) -> dict:
    """OUT/checkpoint/state.json, checked to be a fine-tuning checkpoint a resume can continue."""
    state = ckpt.read_state(out / "checkpoint")
    ckpt.check_model_config(out / "checkpoint", state)
    if not isinstance(state.get("finetune"), dict):
        raise TokkitError(f"{out / 'checkpoint'}: not a fine-tuning checkpoint (a pretraining run resumes with "
                          "tokkit pretrain --resume)")
    _check_finetune_state(state, out / "checkpoint" / "state.json")
    return state


def _check_finetune_state(state: dict, path: Path) -> None:
    """The fine-tuning fields of state.json a resume relies on: the head, the files' digests and
    fields, the best and last evaluations; an edited one is one error naming the field."""
    saved = state["finetune"]

    def bad(field, why):
        raise TokkitError(f"{path}: field 'finetune.{field}' {why}; the checkpoint cannot be resumed exactly")

    try:
        head = HeadConfig.from_dict(saved.get("head"))
    except (TypeError, ValueError) as exc:
        bad("head", f"is not a head tokkit builds ({exc})")
    if head.task != state["config"].get("task"):
        bad("head", f"is a {head.task!r} head, but the run's task is {state['config'].get('task')!r}")
    files = saved.get("files")
    if not (isinstance(files, dict) and isinstance(files.get("train"), str)
            and (files.get("eval") is None or isinstance(files["eval"], str))):
        bad("files", f"must hold the training and evaluation files' digests, got {files!r}")
    if saved.get("fields") is not None and not isinstance(saved["fields"], dict):
        bad("fields", f"must be an object, got {saved['fields']!r}")
    for key in ("best", "last_eval"):
        rec = saved.get(key)
        if rec is not None and not (isinstance(rec, dict) and finite(rec.get("metric_value"))
                                    and whole(rec.get("step"))):
            bad(key, f"must be an evaluation with a finite metric_value and a step, got {rec!r}")


def resumed_config(state: dict, cfg: FinetuneConfig) -> FinetuneConfig:
    """The checkpoint's settings, except those that say how long and where to run."""
    if state["config"].get("task") != cfg.task:
        raise TokkitError(f"checkpoint/state.json: the run trains task {state['config'].get('task')!r}, "
                          f"not {cfg.task!r}; resume it with its own --task")
    if state["config"].get("train_limit") != cfg.train_limit:  # another sample is other training data
        saved = state["config"].get("train_limit")
        raise TokkitError(f"checkpoint/state.json: the run trains on "
                          f"{'all training rows' if saved is None else f'a sample of {saved} training rows'}; "
                          f"resume it with {'no --train-limit' if saved is None else f'--train-limit {saved}'}")
    now = {k: getattr(cfg, k) for k in ("epochs", "max_time", "eval_every_seconds", "checkpoint_every",
                                          "threads", "device", "bf16")}
    try:
        return FinetuneConfig(**{**state["config"], **now})
    except TypeError as exc:
        raise TokkitError(f"checkpoint/state.json: field 'config' does not fit this tokkit ({exc})") from None
    except TokkitError as exc:
        raise TokkitError(f"checkpoint/state.json: field 'config': {exc}") from None


def restore(run, state: dict) -> None:
    """The checkpoint's optimizer, position and best result; the same training and evaluation files."""
    saved = state["finetune"]
    if saved.get("files") != run.files:
        raise TokkitError(f"{run.out / 'checkpoint'}: the run was trained on other files (their contents differ); "
                          "resume with the same training and evaluation files")
    if saved.get("fields") is not None and saved["fields"] != run.fields:
        changed = ", ".join(f"--{k.replace('_', '-')}-field {saved['fields'].get(k)!r}" for k in sorted(run.fields)
                            if saved["fields"].get(k) != run.fields[k])
        raise TokkitError(f"{run.out / 'checkpoint'}: the run read other fields of its files ({changed}); "
                          "resume with the same fields")
    ckpt.load_optimizer_state(run.out / "checkpoint", run.model, run.opt)
    run.step, run.train_time = int(state["step"]), float(state.get("train_seconds", 0.0))
    run.epoch, run.batch_in_epoch = divmod(run.step, run.steps_per_epoch)
    run.best, run.last_eval = saved.get("best"), saved.get("last_eval")
    run.max_length_auto = saved.get("max_length_auto") is True
    ckpt.set_rng_state(state["rng"])
