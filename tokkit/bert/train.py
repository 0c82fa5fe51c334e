"""BERT pretraining on tokkit's masked batches: set-up, steps, evaluation and checkpoints.

>>> from tokkit.bert import pretrain, PretrainConfig
>>> summary = pretrain("tok/", ["wiki/000.txt"], "run/", config=PretrainConfig(steps=100))  # doctest: +SKIP

A run is `_set_up` (every check, the model, the data stream and the held-out set, the first batch
drawn), then `_step` after `_step`, with `_evaluate` and `_checkpoint` along the way, and `_finish`.
Nothing is written before `_set_up` has succeeded, so a refused run leaves nothing behind.
It writes RUN_DIR/metrics.jsonl (one JSON line per logged step or evaluation), RUN_DIR/checkpoint/
(safetensors, state.json and the tokenizer), RUN_DIR/model/ (the folder transformers loads, see
tokkit.bert.export), RUN_DIR/loss_curve.png and RUN_DIR/summary.json. Works unchanged under
`torchrun --nproc-per-node N` (DistributedDataParallel; rank 0 writes the files).
"""
from __future__ import annotations

import json
import logging
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Optional, Sequence

import torch

import tokkit
from tokkit import pretraining
from tokkit._files import FolderLock, atomic_write, check_destination, check_output_not_input
from tokkit._progress import Progress
from tokkit.bert import checkpoint as ckpt
from tokkit.bert import data
from tokkit.bert.ddp import finish_distributed, init_distributed, make_optimizer, train_step, wrap
from tokkit.bert.evaluate import evaluate, most_frequent_token, plot_loss_curve
from tokkit.bert.export import export_model, find_checkpoint
from tokkit.bert.hf import model_folder
from tokkit.bert.hf_config import config_from_hf, read_config
from tokkit.bert.memory import return_freed_memory
from tokkit.bert.recipe import (NO_STEP_LIMIT, OBJECTIVES, PretrainConfig, build_model, fast_bf16, pick_device,
                                resolve_arch)
from tokkit.bert.run_files import Metrics, drop_folder, held_run, keep_folder, staging_folder
from tokkit.errors import TokkitError
from tokkit.labelled.files import is_labelled_file
from tokkit.labelled.lengths import AUTO, fit_length
from tokkit.labelled.rows import Fields

try:
    import resource  # Unix only
except ImportError:
    resource = None

__all__ = ["pretrain", "PretrainConfig", "resolve_arch", "fast_bf16", "check_run_output", "rss_mb", "peak_rss_mb"]
log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------- the run
@dataclass
class _Run:
    """Everything a run holds between its steps."""

    cfg: PretrainConfig
    out: Path
    tok: object
    specials: dict
    device: torch.device
    rank: int
    world: int
    model: torch.nn.Module
    trained: torch.nn.Module  # the model, wrapped for DistributedDataParallel when there are several ranks
    opt: torch.optim.Optimizer
    stream: data.BatchStream
    rates: data.MaskRates
    evalset: Optional[list]
    baseline: Optional[int]
    start: int
    train_time: float
    first: Optional[dict]  # the first batch, drawn during set-up
    say: bool
    metrics: Optional[Metrics] = None
    bar: Optional[Progress] = None
    last_eval: Optional[dict] = None
    corpus: list = field(default_factory=list)  # the corpus inputs, in order
    fields: Fields = Fields()  # the text fields read from labelled corpus files
    lock: Optional[FolderLock] = None  # rank 0 holds the run folder: a second run into it is refused
    dir: Optional[Path] = None  # where the files go now: beside `out` until the first checkpoint (run_files)

    @property
    def main(self) -> bool:
        return self.rank == 0


def pretrain(tokenizer, corpus: Sequence, output, *, config: Optional[PretrainConfig] = None,
             eval_file=None, resume=None, init=None, progress: Optional[bool] = None, force: bool = False,
             fields: Fields = Fields()) -> dict:
    """Pretrain a BERT on `corpus` (text files, labelled files, or one shard folder) and write the run to `output`.

    `tokenizer`: a folder or a Tokenizer. `resume`: a run folder or checkpoint folder to continue
    exactly. `init`: a Hugging Face BERT or ModernBERT folder to start from. Returns the summary
    (also in summary.json): steps run, training seconds, final train and eval metrics. With
    `progress` not False, each evaluation is also printed to stderr as it happens. `fields`: the text
    fields of labelled files (JSONL, JSON, CSV, TSV), read one document a row, their labels never.
    """
    run = _set_up(tokenizer, corpus, output, config or PretrainConfig(), eval_file=eval_file, resume=resume,
                  init=init, progress=progress, force=force, fields=fields)
    try:
        done, last = _train(run)
        return _finish(run, done, last)
    finally:
        drop_folder(run.dir, run.out)
        if run.lock is not None:
            run.lock.release()


def _set_up(tokenizer, corpus, output, cfg: PretrainConfig, *, eval_file, resume, init, progress, force,
            fields: Fields) -> _Run:
    """Check everything, build the model and the data, draw the first batch; then create the output."""
    out = check_run_output(output, resume=resume, force=force)  # before any work
    init = model_folder(init)  # a tokkit run continues from its model/ folder
    corpus = [corpus] if isinstance(corpus, (str, os.PathLike)) else list(corpus)
    check_output_not_input(out, [*corpus, tokenizer if isinstance(tokenizer, (str, os.PathLike)) else None,
                             eval_file, init])

    def prepare(holds):
        check_destination(out, marker_files=(), force=True)  # replaced as a whole: never the current folder, home
        return _prepare(tokenizer, corpus, out, cfg, eval_file=eval_file, resume=resume, init=init, progress=progress,
                        fields=fields)

    return held_run(out, prepare)


def _prepare(tokenizer, corpus, out, cfg: PretrainConfig, *, eval_file, resume, init, progress,
             fields: Fields) -> _Run:
    """Build the model and the data, draw the first batch; then create the output."""
    return_freed_memory()
    tok = _load_tokenizer(tokenizer)
    specials = data.check_tokenizer(tok)
    device = pick_device(cfg.device)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    rank, world = init_distributed(device)
    state, cfg, rdir = _resumed(resume, cfg, tok)
    _check_corpus(state, corpus, rdir, fields)
    if init is not None and not state:
        ckpt.refuse_shape_options(cfg.model, f"--init {init} fixes the model's shape",
                                  config_from_hf(read_config(init), str(init / "config.json")).to_dict())
        ckpt.check_folder_tokenizer(init, tok)
    arch = resolve_arch(cfg, init, state)
    cfg = cfg.with_arch_defaults(arch)
    if cfg.bf16 is None:
        cfg = replace(cfg, bf16=fast_bf16(device))
    model, opt = _model(cfg, arch, tok, specials, device, state, rdir, init)
    if cfg.max_length == AUTO:
        cfg = _fitted(cfg, tok, corpus, fields, model.config.max_position_embeddings,
                      say=progress is not False and rank == 0)
    stream, rates = _data(cfg, tok, corpus, rank, world, state, fields)
    evalset, baseline = _heldout(cfg, tok, eval_file, specials, fields) if rank == 0 else (None, None)
    run = _Run(cfg, out, tok, specials, device, rank, world, model, wrap(model, device), opt, stream, rates,
               evalset, baseline, start=int(state.get("step", 0)), train_time=float(state.get("train_seconds", 0.0)),
               first=None, say=progress is not False and rank == 0, corpus=corpus, fields=fields)
    _draw_first_batch(run)
    _open_output(run, state, progress)
    return run


def _draw_first_batch(run: _Run) -> None:
    """The first step's batch, so that a corpus too small for one fails before anything is written
    (its reading and masking count as training time, as every other batch's)."""
    if run.start >= run.cfg.steps:
        return
    t0 = time.perf_counter()
    run.rates.set(run.cfg.mlm_probability_at(run.start, run.train_time))
    run.first = next(run.stream)
    run.train_time += time.perf_counter() - t0


def _open_output(run: _Run, state: dict, progress) -> None:
    """The run folder, metrics.jsonl (cut back to the checkpoint when resuming), the RNG state, the progress bar."""
    run.dir = staging_folder(run.out, run.main, fresh=not state)
    run.metrics = Metrics(run.dir / "metrics.jsonl", run.main, run.start)
    if state:  # RNG last: building the model and optimizer must not disturb it
        ckpt.set_rng_state(state["rng"])
    cfg = run.cfg
    run.bar = Progress(total=cfg.steps if cfg.steps < NO_STEP_LIMIT else None, desc="pretrain", unit=" steps",
                       enabled=progress if run.main else False)
    run.bar.set(run.start)


def _resumed(resume, cfg: PretrainConfig, tok):
    """(checkpoint state, the run's config, checkpoint folder) to resume; ({}, cfg, None) for a new run.

    The checkpoint's settings win, except those that say how long and how to run (steps, max_time,
    evaluation and checkpoint intervals, threads, device).
    """
    if resume is None:
        return {}, cfg, None
    rdir = find_checkpoint(resume)
    state = ckpt.read_state(rdir)
    ckpt.check_model_config(rdir, state)
    ckpt.check_tokenizer(rdir, state, tok)
    saved = {"shuffle": False, **state["config"]}  # runs saved before shuffling existed read in file order
    ckpt.refuse_shape_options(cfg.model, f"the run in {resume} keeps its checkpoint's shape", state["model_config"])
    now = {k: getattr(cfg, k) for k in ("steps", "max_time", "eval_every", "checkpoint_every",
                                          "eval_every_seconds", "threads", "device")}
    try:
        return state, PretrainConfig(**{**saved, **now}), rdir
    except TypeError as exc:
        raise TokkitError(f"{rdir}/state.json: field 'config' does not fit this tokkit ({exc})") from None
    except TokkitError as exc:
        raise TokkitError(f"{rdir}/state.json: field 'config': {exc}") from None


def corpus_fingerprint(paths, fields: Fields = Fields()) -> list[list]:
    """[name, bytes] of each corpus input in order (a folder's bytes are its files' total), then the text
    fields read when it is or holds a labelled file: what a resume must see again for the stream to
    continue where it stopped."""
    out = []
    for p in map(Path, paths):
        files = [f for f in p.rglob("*") if f.is_file()] if p.is_dir() else [p]
        entry = [p.name, sum(f.stat().st_size for f in files)]
        if any(is_labelled_file(f) for f in files):  # other fields of the same file are another corpus
            entry += [fields.text, fields.text_pair]
        out.append(entry)
    return out


def _check_corpus(state: dict, corpus: list, rdir, fields: Fields) -> None:
    """A resume reads the files the run began with, in the same order, for the same text fields
    (checkpoints that predate the record are taken as they are)."""
    saved = state.get("corpus")
    if saved is None:
        return
    now = corpus_fingerprint(corpus, fields)
    if now != saved:
        names = ", ".join(str(entry[0]) for entry in saved)
        raise TokkitError(f"{rdir}: the run was trained on other corpus files or another order, or read other text "
                          f"fields of them ({names}); resume with the same files in the same order and the same "
                          "--text-field")


def _model(cfg: PretrainConfig, arch: str, tok, specials: dict, device, state: dict, rdir, init):
    """The model and its optimizer: fresh, from `init`, or restored from the checkpoint."""
    settings = state["model_config"] if state else {"pad_token_id": specials["[PAD]"] or 0, **cfg.model,
                                                     "vocab_size": tok.vocab_size}
    torch.manual_seed(cfg.seed)
    model, mcfg = build_model(arch, settings, init if not state else None, objective=cfg.objective,
                              generator_layers=cfg.generator_layers)
    if cfg.max_length != AUTO and cfg.max_length > mcfg.max_position_embeddings:  # auto is capped by them
        raise TokkitError(f"--max-length {cfg.max_length} exceeds the model's "
                          f"{mcfg.max_position_embeddings} positions")
    if mcfg.vocab_size != tok.vocab_size:
        raise TokkitError(f"{rdir if state else init}: checkpoint vocab size {mcfg.vocab_size} does not match the "
                          f"tokenizer's {tok.vocab_size}")
    model.to(device)
    opt = make_optimizer(model, cfg.lr, cfg.weight_decay)
    if state:
        ckpt.load_model_state(rdir, model)
        ckpt.load_optimizer_state(rdir, model, opt)
    return model, opt


def _fitted(cfg: PretrainConfig, tok, corpus, fields: Fields, positions: int, *, say: bool) -> PretrainConfig:
    """The config with --max-length auto resolved: a block holds nearly every row of the labelled files."""
    if len(corpus) == 1 and pretraining.is_shard_dir(corpus[0]):
        raise TokkitError(f"{corpus[0]}: --max-length auto fits labelled files; a shard folder's examples were cut "
                          "when it was written")
    counts = pretraining.labelled_lengths(tok, corpus, fields)
    if not counts:
        raise TokkitError("--max-length auto fits the rows of labelled files (.jsonl, .json, .csv, .tsv), and "
                          "the corpus holds none; give --max-length a number")
    specials = 3 if OBJECTIVES[cfg.objective] == "nsp" else 2  # [CLS] A [SEP] (B [SEP])
    length = fit_length([n + specials for n in counts], cap=positions)
    if say:
        sys.stderr.write(f"--max-length auto: {length} tokens (99th percentile of the labelled rows, [CLS] and "
                         f"[SEP] included, to a multiple of 8, at most {positions})\n")
    return replace(cfg, max_length=length)


def _data(cfg: PretrainConfig, tok, corpus, rank: int, world: int, state: dict, fields: Fields):
    """The batch stream, at the checkpoint's position when resuming, and its masking-rate switch."""
    dataset = data.make_dataset(tok, corpus, kind=OBJECTIVES[cfg.objective], max_length=cfg.max_length,
                                seed=cfg.seed, rank=rank, world_size=world, shuffle=cfg.shuffle,
                                buffer_size=cfg.shuffle_buffer, fields=fields)
    collator = data.make_collator(tok, seed=cfg.seed, mlm_probability=cfg.mlm_probability,
                                  whole_word=cfg.whole_word_masking)
    stream = data.BatchStream(dataset, collator, cfg.batch_size)
    stream.seek(state.get("data", {"epoch": 0, "examples": 0}))
    return stream, data.MaskRates(tok, collator, cfg.mlm_probability)


def _heldout(cfg: PretrainConfig, tok, eval_file, specials: dict, fields: Fields):
    """The held-out batches (the standard 15% masking whatever the training rate) and the unigram baseline."""
    if eval_file is None:
        return None, None
    evalset = data.eval_batches(tok, eval_file, blocks=cfg.eval_blocks, max_length=cfg.max_length, batch_size=64,
                                fields=fields)
    try:
        baseline = most_frequent_token(evalset, tok.special_ids if hasattr(tok, "special_ids")
                                       else [i for i in specials.values() if i is not None])
    except ValueError:
        raise TokkitError(f"{eval_file}: the evaluation text holds no ordinary tokens, only special ones") from None
    return evalset, baseline


# ---------------------------------------------------------------------------------------- steps
def _train(run: _Run):
    """Steps until `steps` or `max_time`; evaluations and checkpoints on the way. Returns (steps done, last stats)."""
    cfg, last, done = run.cfg, {}, run.start
    every_s = cfg.eval_every_seconds
    next_timed = (int(run.train_time // every_s) + 1) * every_s if every_s else None
    run.trained.train()
    try:
        for step in range(run.start, cfg.steps):
            last = _step(run, step)
            done = step + 1
            _log(run, done, last)
            out_of_time = cfg.max_time is not None and run.train_time >= cfg.max_time
            timed = next_timed is not None and run.train_time >= next_timed
            if timed:
                next_timed = (int(run.train_time // every_s) + 1) * every_s
            if ((cfg.eval_every and done % cfg.eval_every == 0) or timed) and done != cfg.steps and not out_of_time:
                run.last_eval = _evaluate(run, done)
            if cfg.checkpoint_every and done % cfg.checkpoint_every == 0 and done != cfg.steps:
                _checkpoint(run, done)
            if _everyone_stops(run, out_of_time):
                break
    finally:
        run.bar.close()
    return done, last


def _step(run: _Run, step: int) -> dict:
    """One optimizer step at this step's masking rate and lr (reading and masking the batch count as training time)."""
    cfg = run.cfg
    t0 = time.perf_counter()
    if run.first is not None:  # drawn during set-up, at this step's masking rate
        batch, run.first = run.first, None
    else:
        run.rates.set(cfg.mlm_probability_at(step, run.train_time))
        batch = next(run.stream)
    batch = {k: v.to(run.device) for k, v in batch.items()}
    if cfg.objective != "mlm+nsp":  # no NSP, even if the collator hands out NSP labels
        batch.pop("next_sentence_label", None)
    for group in run.opt.param_groups:
        group["lr"] = cfg.lr_at(step, run.train_time)
    stats = train_step(run.trained, run.opt, batch, clip=cfg.clip, bf16=cfg.bf16)
    run.train_time += time.perf_counter() - t0
    if not math.isfinite(stats["loss"]):
        raise _diverged(run, step + 1, f"the loss is {stats['loss']}")
    return stats


def _diverged(run: _Run, step: int, what: str) -> TokkitError:
    kept = run.out / "checkpoint" if (run.out / "checkpoint").exists() else None
    return TokkitError(f"training diverged at step {step}: {what} (try a lower --lr); "
                       + (f"{kept} holds the last good state" if kept else "no checkpoint was written"))


def _log(run: _Run, done: int, last: dict) -> None:
    shown = f"loss {last['loss']:.3f}"
    if run.last_eval:
        shown += f" | held-out {run.last_eval['mlm_loss']:.3f} ratio {run.last_eval['mask_acc_ratio']:.2f}"
    run.bar.update(1, postfix=shown)
    if done % run.cfg.log_every == 0 or done == run.cfg.steps or done == run.start + 1:
        run.metrics.write({"kind": "train", "step": done, "lr": run.opt.param_groups[0]["lr"],
                           "mask_rate": round(run.rates.rate, 4), "train_seconds": round(run.train_time, 3),
                           "rss_mb": rss_mb(), **last})


def _everyone_stops(run: _Run, out_of_time: bool) -> bool:
    """Whether to stop now; with several ranks rank 0's clock decides, so every rank stops at the same step."""
    if run.world > 1:
        flag = torch.tensor([float(out_of_time)])
        torch.distributed.broadcast(flag, 0)
        out_of_time = bool(flag.item())
    return out_of_time


# ---------------------------------------------------------------------------------------- evaluation, checkpoints
def _evaluate(run: _Run, step: int) -> Optional[dict]:
    """Held-out metrics (rank 0, when there is an evaluation file), written and shown."""
    if run.evalset is None:
        return None
    res = evaluate(run.model, run.evalset, mask_token_id=run.specials["[MASK]"], baseline_id=run.baseline,
                   device=run.device)
    token = run.tok.id_to_token(run.baseline)
    rec = {"kind": "eval", "step": step, "train_seconds": round(run.train_time, 2), **res,
           "baseline_token": token, "rss_mb": rss_mb()}
    run.metrics.write(rec)
    log.info("step %d eval: %s", step, rec)
    if run.say:
        _say(run.bar, f"step {step}  {run.train_time:.0f} s  held-out loss {res['mlm_loss']:.3f}  "
                      f"[MASK] ratio {res['mask_acc_ratio']:.2f}  (acc {res['mask_acc']:.2%} vs "
                      f"{res['baseline_mask_acc']:.2%} for {token!r})")
    return rec


def _checkpoint(run: _Run, step: int) -> None:
    """RUN/checkpoint/ (to resume) and RUN/model/ (for transformers), both replaced atomically (rank 0)."""
    # Every rank checks (the weights are the same everywhere), so all of them stop together.
    if not all(bool(torch.isfinite(p).all()) for p in run.model.parameters()):
        raise _diverged(run, step, "the weights are no longer finite")
    if not run.main:
        return
    ckpt.save_checkpoint(run.dir / "checkpoint", run.model, run.opt, {
        "step": step, "data": run.stream.position, "config": asdict(run.cfg), "train_seconds": run.train_time,
        "tokenizer_vocab_size": run.tok.vocab_size, "world_size": run.world,
        "corpus": corpus_fingerprint(run.corpus, run.fields)}, tokenizer=run.tok)
    export_model(run.model, run.tok, run.dir)
    run.dir = keep_folder(run.dir, run.out, run.metrics)


def _finish(run: _Run, done: int, last: dict) -> dict:
    """The final checkpoint and evaluation, the loss curve and summary.json."""
    _checkpoint(run, done)
    run.last_eval = _evaluate(run, done) or run.last_eval
    mcfg = run.model.config
    summary = {"steps": done, "train_seconds": round(run.train_time, 2), "world_size": run.world,
               "arch": run.cfg.arch, "config": asdict(run.cfg), "model_config": mcfg.to_dict(), "final_train": last,
               "final_eval": run.last_eval, "peak_rss_mb": peak_rss_mb(),
               "corpus": corpus_fingerprint(run.corpus, run.fields), "epochs": run.stream.epoch,
               "max_length": run.cfg.max_length}
    if run.main:
        png = plot_loss_curve(run.out / "metrics.jsonl", run.out / "loss_curve.png")
        summary["loss_curve"] = str(png) if png else None
        atomic_write(run.out / "summary.json", json.dumps(summary, indent=1, sort_keys=True))
    if run.world > 1:
        finish_distributed()
    return summary


# ---------------------------------------------------------------------------------------- helpers
def _load_tokenizer(tokenizer):
    if isinstance(tokenizer, (str, os.PathLike)):
        if not os.path.exists(tokenizer):
            raise TokkitError(f"{tokenizer}: tokenizer folder does not exist")
        return tokkit.load(tokenizer)
    return tokenizer


def rss_mb() -> Optional[float]:
    """This process's resident memory in MB (Linux), None elsewhere."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def _say(bar, line: str) -> None:
    """A line on stderr above the progress bar (which redraws itself on its next update)."""
    if bar.enabled:
        sys.stderr.write("\r" + " " * 119 + "\r")
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def peak_rss_mb() -> Optional[float]:
    """The most resident memory this process has held, in MB (Unix), None elsewhere."""
    if resource is None:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


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
