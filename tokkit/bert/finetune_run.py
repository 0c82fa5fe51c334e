"""Fine-tuning: a pretrained encoder (or the same one from random init) plus a task head, trained on labelled files.

>>> from tokkit.bert import finetune, FinetuneConfig
>>> summary = finetune("run/", "train.jsonl", "out/", config=FinetuneConfig(task="classify"),
...                    eval_file="dev.jsonl")                                         # doctest: +SKIP

A run is `_set_up` (every check, the data, the model), then the skeleton of tokkit.bert.run_loop
with `Finetuning` as its objective: epochs of steps of the task's loss, with `_evaluate` on the
evaluation file after each epoch (and every `eval_every_seconds`), and `_finish`. The output folder is a transformers folder of the best model so far (by the task's
metric on the evaluation file, or the last model without one) with its tokenizer, plus
metrics.jsonl, training_curve.png, summary.json and checkpoint/ (to resume). Nothing is written
before `_set_up` has succeeded. A run holds its output folder (tokkit._files.FolderLock): a second
run into it is refused. A new run writes into a folder beside OUT until it first has something
to keep (a checkpoint or a model), which then replaces OUT in one step: OUT holds the earlier run
(with --force) or the new one, never a mix, and a run stopped before that leaves OUT as it was.
Works under `torchrun` as pretraining does (each rank takes a share of every batch; rank 0 writes).
"""
from __future__ import annotations

import logging
import math
import os
import sys
from dataclasses import asdict, dataclass, replace
from typing import Optional

import numpy as np
import torch

from tokkit._files import check_output_not_input
from tokkit.bert import run_loop as loop
from tokkit.bert import task_data as td
from tokkit.bert.ddp import init_distributed, task_step, wrap
from tokkit.bert.finetune_config import FinetuneConfig
from tokkit.bert.finetune_model import layerwise_optimizer, starting_point
from tokkit.bert.finetune_resume import restore, resume_state, resumed_config, sha256
from tokkit.bert.heads import HeadConfig
from tokkit.bert.recipe import fast_bf16, pick_device
from tokkit.bert.run_files import plot_curve, publish
from tokkit.bert.run_loop import check_run_output, peak_rss_mb
from tokkit.bert.schedule import Schedule
from tokkit.errors import TokkitError
from tokkit.labelled import Fields, read_examples, sample_rows
from tokkit.labelled.lengths import AUTO, fit_length, row_lengths

UNSEEN_LABELS = ("error", "wrong")
__all__ = ["finetune", "FinetuneConfig", "evaluate_data", "epoch_order"]
log = logging.getLogger(__name__)


@dataclass
class _Run(loop.Run):
    """A fine-tuning run: the skeleton's run with the head, the data, the epochs and the best evaluation."""

    head: Optional[HeadConfig] = None
    train: Optional[td.TaskData] = None
    dev: Optional[td.TaskData] = None
    steps_per_epoch: int = 0
    schedule: Optional[Schedule] = None
    epoch: int = 0
    batch_in_epoch: int = 0
    order: Optional[tuple] = None  # (epoch, the training rows' order in it)
    best: Optional[dict] = None   # the best evaluation so far
    files: Optional[dict] = None  # sha256 of the training and evaluation files (a resume must see the same)
    fields: Optional[dict] = None  # the fields read from them (another --label-field is other data)
    train_rows: int = 0            # the training rows trained on (a --train-limit sample's size)
    max_length_auto: bool = False  # whether --max-length auto chose cfg.max_length

    @property
    def total_steps(self) -> int:
        return self.steps_per_epoch * self.cfg.epochs


def finetune(model, train_file, output, *, config: FinetuneConfig, eval_file=None, tokenizer=None,
             from_scratch: bool = False, arch: Optional[str] = None, model_settings: Optional[dict] = None,
             fields: Fields = Fields(), unseen_labels: str = "error", resume: bool = False,
             progress: Optional[bool] = None, force: bool = False) -> dict:
    """Train a `config.task` head on `train_file` and write the best model to `output`.

    `model`: a tokkit pretraining run, or a transformers folder (BERT or ModernBERT; a fine-tuned
    one continues with its own labels), or None with `from_scratch` and `tokenizer`.
    `from_scratch`: the same architecture at random init, the baseline a claim that pretraining
    helps needs (with `model`, its shape; without, `arch` and `model_settings`).
    `tokenizer`: a folder or Tokenizer; default the model folder's own. `unseen_labels`: a label of
    the evaluation file that the training file lacks is an error ("error"), or a prediction the
    model cannot make, scored as wrong ("wrong"; the Brown corpus's splits have a few such tags).
    `resume`: continue the run saved in `output`. Returns the summary (also in summary.json).
    """
    if unseen_labels not in UNSEEN_LABELS:
        raise TokkitError(f"unseen_labels must be one of {list(UNSEEN_LABELS)}, not {unseen_labels!r}")
    if config.eval_every_seconds is not None and eval_file is None:
        raise TokkitError("eval_every_seconds (--eval-every-seconds) needs an evaluation file (--eval)")
    run = _set_up(model, train_file, output, config, eval_file=eval_file, tokenizer=tokenizer,
                  from_scratch=from_scratch, arch=arch, model_settings=model_settings, fields=fields,
                  unseen_labels=unseen_labels, resume=resume, progress=progress, force=force)
    return loop.execute(run, FINETUNING)


# ---------------------------------------------------------------------------------------- set-up
def _set_up(model, train_file, output, cfg, *, eval_file, tokenizer, from_scratch, arch, model_settings, fields,
            unseen_labels, resume, progress, force) -> _Run:
    out = check_run_output(output, resume=output if resume else None, force=force)
    check_output_not_input(out, [train_file, eval_file, model, tokenizer if isinstance(tokenizer, (str, os.PathLike))
                                 else None])

    def prepare(holds):
        if holds and not resume:  # a run that ended while we checked may have filled OUT
            check_run_output(output, force=force)
        return _prepare(model, train_file, out, cfg, eval_file=eval_file, tokenizer=tokenizer,
                        from_scratch=from_scratch, arch=arch, model_settings=model_settings, fields=fields,
                        unseen_labels=unseen_labels, resume=resume, progress=progress)

    return loop.hold(out, prepare)


def _prepare(model, train_file, out, cfg, *, eval_file, tokenizer, from_scratch, arch, model_settings, fields,
             unseen_labels, resume, progress) -> _Run:
    """Every check, the data, the model and its optimizer, then the output opened."""
    device = pick_device(cfg.device)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    if cfg.bf16 is None:
        cfg = replace(cfg, bf16=fast_bf16(device))
    state = resume_state(out) if resume else {}
    if state:
        cfg = resumed_config(state, cfg)
    fitted = cfg.max_length == AUTO
    start = starting_point(model, tokenizer, cfg, from_scratch=from_scratch, arch=arch,
                           settings=model_settings, state=state, checkpoint=out / "checkpoint")
    cfg, head, train, dev, train_rows = _data(cfg, start, train_file, eval_file, fields, unseen_labels, progress)
    torch.manual_seed(cfg.seed)
    net = start.build(head, state).to(device)
    rank, world = init_distributed(device)
    run = _Run(cfg, out, start.tokenizer, device, rank, world, net, wrap(net, device), layerwise_optimizer(net, cfg),
               head=net.head_config, train=train, dev=dev, train_rows=train_rows, max_length_auto=fitted,
               files={"train": sha256(train_file), "eval": sha256(eval_file) if eval_file is not None else None},
               fields=asdict(fields))
    _epochs(run)
    if state:
        restore(run, state)
    _open_output(run, progress)
    return run


def _data(cfg: FinetuneConfig, start, train_file, eval_file, fields, unseen_labels, progress):
    """(config, head, training data, evaluation data or None, training rows): the files read and
    checked, the head their labels give, --max-length auto resolved, the features built."""
    train_rows = read_examples(train_file, cfg.kind.rows, fields=fields)
    head = start.head_for(cfg, train_rows, train_file)  # the whole file's labels, whatever the sample holds
    if cfg.max_length == AUTO:  # fitted to the whole file, so every --train-limit of it gets the same length
        cfg = _fitted(cfg, start, train_rows, say=progress is not False and os.environ.get("RANK", "0") == "0")
    train_rows = sample_rows(train_rows, cfg.train_limit, train_file)
    dev_rows = read_examples(eval_file, cfg.kind.rows, fields=fields) if eval_file is not None else None
    if dev_rows is not None:
        cfg.kind.check_eval_rows(dev_rows, head, eval_file, unseen_labels)
    train = _features(cfg, start.tokenizer, train_rows, head, True)
    dev = _features(cfg, start.tokenizer, dev_rows, head, False) if dev_rows else None
    for data, path in ((train, train_file), (dev, eval_file)):
        if data is not None:
            td.check_fits(data, start.config, path)
    td.check_learnable(train, train_file)
    return cfg, head, train, dev, len(train_rows)


def _epochs(run: _Run) -> None:
    """Steps per epoch and the lr schedule over them. With several ranks every step needs rows on
    each: a last, partial batch is left out of the epoch."""
    cfg, n, world = run.cfg, len(run.train), run.world
    run.steps_per_epoch = math.ceil(n / cfg.batch_size) if world == 1 else max(1, n // cfg.batch_size)
    if world > cfg.batch_size:
        raise TokkitError(f"--batch-size {cfg.batch_size} gives some of the {world} ranks no rows")
    run.schedule = cfg.schedule(run.total_steps)


def _fitted(cfg: FinetuneConfig, start, rows: list, *, say: bool) -> FinetuneConfig:
    """The config with --max-length auto resolved against the training rows and the model's positions."""
    length = fit_length(row_lengths(start.tokenizer, cfg.kind.rows, rows), cap=start.config.max_position_embeddings)
    if say:
        sys.stderr.write(f"--max-length auto: {length} tokens (99th percentile of the training rows, specials "
                         f"included, to a multiple of 8, at most {start.config.max_position_embeddings})\n")
    return replace(cfg, max_length=length)


def _features(cfg: FinetuneConfig, tok, rows, head: HeadConfig, training: bool) -> td.TaskData:
    """Training rows with their targets; evaluation rows without (they are scored from the rows' own labels)."""
    return td.task_data(cfg.task, tok, rows, head, max_length=cfg.length, stride=cfg.stride,
                        label_all_subtokens=cfg.label_all_subtokens, labelled=training, training=training)


def _open_output(run: _Run, progress) -> None:
    """Where the files go: OUT itself when resuming, else a new folder beside it (see run_loop.keep)."""
    loop.open_output(run, fresh=run.step == 0, total=run.total_steps, desc=f"finetune {run.cfg.task}",
                     progress=progress)


# ---------------------------------------------------------------------------------------- steps
def epoch_order(seed: int, epoch: int, n: int) -> np.ndarray:
    """The training rows' order in `epoch`: a permutation drawn from (seed, epoch) alone, so a
    resumed run sees the batches it would have.

    >>> epoch_order(0, 1, 5).tolist() == epoch_order(0, 1, 5).tolist() != epoch_order(0, 2, 5).tolist()
    True
    """
    return np.random.default_rng([seed, epoch]).permutation(n)


class Finetuning(loop.Objective):
    """A task head's objective: `epochs` passes over the training rows in batches, an evaluation and a
    checkpoint at each epoch's end (and every `eval_every_seconds`, every `checkpoint_every` steps).
    A run resumed past its time budget takes no step."""

    checks_time_first = True

    def more(self, run: _Run) -> bool:
        return run.epoch < run.cfg.epochs

    def step(self, run: _Run) -> dict:
        cfg, order = run.cfg, _order(run)
        first = run.batch_in_epoch * cfg.batch_size
        rows = order[first:first + cfg.batch_size][run.rank::run.world]  # this rank's share of the batch
        lr = run.schedule.lr(run.step, run.train_time)
        loss = loop.timed_step(run, lambda: td.batch(run.train, rows, run.device), lr,
                               lambda batch: task_step(run.trained, run.opt, batch, clip=cfg.clip, bf16=cfg.bf16))
        run.batch_in_epoch += 1
        return {"loss": loss, "lr": lr}

    def after_step(self, run: _Run, stats: dict, *, over: bool, timed: bool) -> None:
        _log(run, stats)
        if timed:
            _evaluate(run)
        if run.cfg.checkpoint_every and run.step % run.cfg.checkpoint_every == 0:
            _checkpoint(run)
        if run.batch_in_epoch == run.steps_per_epoch:
            run.epoch, run.batch_in_epoch = run.epoch + 1, 0
            _evaluate(run)
            _checkpoint(run)

    def finish(self, run: _Run) -> dict:
        return _finish(run)


FINETUNING = Finetuning()


def _order(run: _Run) -> np.ndarray:
    """The training rows' order in the run's epoch (drawn once an epoch)."""
    if run.order is None or run.order[0] != run.epoch:
        run.order = (run.epoch, epoch_order(run.cfg.seed, run.epoch, len(run.train)))
    return run.order[1]


def _log(run: _Run, stats: dict) -> None:
    loss = stats["loss"]
    run.bar.update(1, postfix=f"loss {loss:.3f}" + (f" | dev {run.last_eval['metric_value']:.4f}"
                                                     if run.last_eval else ""))
    if run.step % run.cfg.log_every == 0 or run.step == 1:
        run.metrics.write({"kind": "train", "step": run.step, "epoch": run.epoch, "lr": stats["lr"], "loss": loss,
                           "train_seconds": round(run.train_time, 3)})


# ---------------------------------------------------------------------------------------- evaluation, outputs
def _evaluate(run: _Run) -> None:
    """Score the evaluation file (rank 0); publish the model when it is the best so far."""
    if run.dev is None or not run.main:
        return
    report = evaluate_data(run.model, run.dev, run.head, run.cfg, device=run.device)
    rec = {"kind": "eval", "step": run.step, "epoch": run.epoch, "train_seconds": round(run.train_time, 2),
           **{k: v for k, v in report.items() if not isinstance(v, dict)}}
    run.last_eval = rec
    run.metrics.write(rec)
    if run.best is None or rec["metric_value"] > run.best["metric_value"]:
        run.best = rec
        publish(run.dir, run.model, run.tok, settings=_settings(run.cfg))
        loop.keep(run)
    log.info("step %d eval: %s", run.step, rec)


def evaluate_data(model, data: td.TaskData, head: HeadConfig, cfg: FinetuneConfig, *, device=None) -> dict:
    """The task's report on `data`, with "metric_value" the figure that picks the best model."""
    outputs = td.predict(model, data, device=device, bf16=bool(cfg.bf16))
    report = td.score(data, td.decode(data, outputs, head, n_best=cfg.n_best,
                                      max_answer_length=cfg.max_answer_length), head)
    return {**report, "metric_value": report[report["metric"]]}


def _settings(cfg: FinetuneConfig) -> dict:
    """What reading the model's inputs and outputs back needs (kept in config.json)."""
    return {"task": cfg.task, "max_length": cfg.length, "stride": cfg.stride, "n_best": cfg.n_best,
            "max_answer_length": cfg.max_answer_length, "label_all_subtokens": cfg.label_all_subtokens}


def _checkpoint(run: _Run) -> None:
    """RUN/checkpoint/: the model, the optimizer, the position in the epochs and the evaluations so far."""
    state = {"step": run.step, "data": {"epoch": run.epoch, "examples": run.batch_in_epoch * run.cfg.batch_size},
             "config": asdict(run.cfg), "train_seconds": run.train_time, "tokenizer_vocab_size": run.tok.vocab_size,
             "finetune": {"head": run.head.to_dict(), "files": run.files, "fields": run.fields, "best": run.best,
                          "last_eval": run.last_eval, "max_length_auto": run.max_length_auto}}
    if loop.save_checkpoint(run, FINETUNING, state):
        loop.keep(run)


def _finish(run: _Run) -> dict:
    """The last evaluation and checkpoint, the model (when nothing was published), the curve and summary.json."""
    if run.last_eval is None or run.last_eval["step"] != run.step:
        _evaluate(run)
        _checkpoint(run)
    if run.main and (run.dev is None or run.best is None):
        publish(run.dir, run.model, run.tok, settings=_settings(run.cfg))
        loop.keep(run)
    summary = {"task": run.cfg.task, "steps": run.step, "epochs": run.step / max(1, run.steps_per_epoch),
               "train_seconds": round(run.train_time, 2), "world_size": run.world, "config": asdict(run.cfg),
               "head": run.head.to_dict(), "model_config": run.model.config.to_dict(), "best_eval": run.best,
               "final_eval": run.last_eval, "peak_rss_mb": peak_rss_mb(), "train_rows": run.train_rows,
               "max_length": run.cfg.length, "max_length_auto": run.max_length_auto}
    loop.keep(run)
    return loop.write_summary(run, summary, "training_curve", plot_curve)

