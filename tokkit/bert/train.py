"""BERT pretraining on tokkit's masked batches: set-up, steps, evaluation and checkpoints.

>>> from tokkit.bert import pretrain, PretrainConfig
>>> summary = pretrain("tok/", ["wiki/000.txt"], "run/", config=PretrainConfig(steps=100))  # doctest: +SKIP

A run is `_set_up` (every check, the model, the data stream and the held-out set, the first batch
drawn), then the skeleton of tokkit.bert.run_loop with `Pretraining` as its objective: steps of
the masked-LM (MLM+NSP, ELECTRA) loss, with `_evaluate` and `_checkpoint` along the way, and `finish`.
Nothing is written before `_set_up` has succeeded, so a refused run leaves nothing behind.
It writes RUN_DIR/metrics.jsonl (one JSON line per logged step or evaluation), RUN_DIR/checkpoint/
(safetensors, state.json and the tokenizer), RUN_DIR/model/ (the folder transformers loads, see
tokkit.bert.export), RUN_DIR/loss_curve.png and RUN_DIR/summary.json. Works unchanged under
`torchrun --nproc-per-node N` (DistributedDataParallel; rank 0 writes the files).
"""
from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Optional, Sequence

import torch

from tokkit import pretraining
from tokkit._files import check_output_not_input
from tokkit.bert import checkpoint as ckpt
from tokkit.bert import data
from tokkit.bert import run_loop as loop
from tokkit.bert.ddp import init_distributed, make_optimizer, train_step, wrap
from tokkit.bert.evaluate import evaluate, most_frequent_token, plot_loss_curve
from tokkit.bert.export import export_model
from tokkit.bert.folders import load_tokenizer, model_folder, read_folder
from tokkit.bert.memory import return_freed_memory
from tokkit.bert.pretrain_resume import check_corpus, corpus_fingerprint, resumed
from tokkit.bert.recipe import (NO_STEP_LIMIT, OBJECTIVES, PretrainConfig, build_model, fast_bf16, pick_device,
                                resolve_arch)
from tokkit.bert.run_loop import check_run_output, peak_rss_mb, rss_mb
from tokkit.errors import TokkitError
from tokkit.labelled.lengths import AUTO, fit_length
from tokkit.labelled.rows import Fields

__all__ = ["pretrain", "PretrainConfig", "resolve_arch", "fast_bf16", "check_run_output", "rss_mb", "peak_rss_mb"]
log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------- the run
@dataclass
class _Run(loop.Run):
    """A pretraining run: the skeleton's run with the data stream, the held-out set and the corpus."""

    specials: dict = field(default_factory=dict)
    stream: Optional[data.BatchStream] = None
    rates: Optional[data.MaskRates] = None
    evalset: Optional[list] = None
    baseline: Optional[int] = None
    start: int = 0
    first: Optional[dict] = None  # the first batch, drawn during set-up
    say: bool = False
    last_train: dict = field(default_factory=dict)  # the last step's stats
    corpus: list = field(default_factory=list)  # the corpus inputs, in order
    fields: Fields = Fields()  # the text fields read from labelled corpus files


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
    return loop.execute(run, PRETRAINING)


def _set_up(tokenizer, corpus, output, cfg: PretrainConfig, *, eval_file, resume, init, progress, force,
            fields: Fields) -> _Run:
    """Check everything, build the model and the data, draw the first batch; then create the output."""
    out = check_run_output(output, resume=resume, force=force)  # before any work
    init = model_folder(init)  # a tokkit run continues from its model/ folder
    corpus = [corpus] if isinstance(corpus, (str, os.PathLike)) else list(corpus)
    check_output_not_input(out, [*corpus, tokenizer if isinstance(tokenizer, (str, os.PathLike)) else None,
                             eval_file, init])

    return loop.hold(out, lambda holds: _prepare(tokenizer, corpus, out, cfg, eval_file=eval_file, resume=resume,
                                                 init=init, progress=progress, fields=fields))


def _prepare(tokenizer, corpus, out, cfg: PretrainConfig, *, eval_file, resume, init, progress,
             fields: Fields) -> _Run:
    """Build the model and the data, draw the first batch; then create the output."""
    return_freed_memory()
    tok = load_tokenizer(tokenizer)
    specials = data.check_tokenizer(tok)
    device = pick_device(cfg.device)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    rank, world = init_distributed(device)
    state, cfg, rdir = resumed(resume, cfg, tok)
    check_corpus(state, corpus, rdir, fields)
    if init is not None and not state:
        ckpt.refuse_shape_options(cfg.model, f"--init {init} fixes the model's shape",
                                  read_folder(init).config.to_dict())
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
    start = int(state.get("step", 0))
    run = _Run(cfg, out, tok, device, rank, world, model, wrap(model, device), opt, step=start,
               train_time=float(state.get("train_seconds", 0.0)), specials=specials, stream=stream, rates=rates,
               evalset=evalset, baseline=baseline, start=start, say=progress is not False and rank == 0,
               corpus=corpus, fields=fields)
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
    steps = run.cfg.steps
    loop.open_output(run, fresh=not state, total=steps if steps < NO_STEP_LIMIT else None, desc="pretrain",
                     progress=progress)
    if state:  # RNG last: building the model and optimizer must not disturb it
        ckpt.set_rng_state(state["rng"])


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


# ---------------------------------------------------------------------------------------- the objective
class Pretraining(loop.Objective):
    """The masked-LM (MLM+NSP, ELECTRA) objective: `steps` steps, evaluations every `eval_every`
    steps or `eval_every_seconds`, checkpoints every `checkpoint_every` steps; the last step's
    evaluation and checkpoint are `finish`'s."""

    def more(self, run: _Run) -> bool:
        return run.step < run.cfg.steps

    def step(self, run: _Run) -> dict:
        """One optimizer step at this step's masking rate and lr (reading and masking the batch count
        as training time)."""
        cfg, step = run.cfg, run.step
        stats = loop.timed_step(run, lambda: _batch(run, step), cfg.lr_at(step, run.train_time),
                                lambda batch: train_step(run.trained, run.opt, batch, clip=cfg.clip, bf16=cfg.bf16))
        run.last_train = stats
        return stats

    def after_step(self, run: _Run, stats: dict, *, over: bool, timed: bool) -> None:
        cfg, done = run.cfg, run.step
        _log(run, done, stats)
        if ((cfg.eval_every and done % cfg.eval_every == 0) or timed) and done != cfg.steps and not over:
            run.last_eval = _evaluate(run, done)
        if cfg.checkpoint_every and done % cfg.checkpoint_every == 0 and done != cfg.steps:
            _checkpoint(run, done)

    def finish(self, run: _Run) -> dict:
        return _finish(run)

    def diverged(self, run: _Run, what: str) -> TokkitError:
        kept = run.out / "checkpoint" if (run.out / "checkpoint").exists() else None
        return TokkitError(f"training diverged at step {run.step}: {what} (try a lower --lr); "
                           + (f"{kept} holds the last good state" if kept else "no checkpoint was written"))


PRETRAINING = Pretraining()


def _batch(run: _Run, step: int) -> dict:
    """This step's batch on the device: the one drawn during set-up, or the next at this step's masking rate."""
    if run.first is not None:  # drawn during set-up, at this step's masking rate
        batch, run.first = run.first, None
    else:
        run.rates.set(run.cfg.mlm_probability_at(step, run.train_time))
        batch = next(run.stream)
    batch = {k: v.to(run.device) for k, v in batch.items()}
    if run.cfg.objective != "mlm+nsp":  # no NSP, even if the collator hands out NSP labels
        batch.pop("next_sentence_label", None)
    return batch


def _log(run: _Run, done: int, last: dict) -> None:
    shown = f"loss {last['loss']:.3f}"
    if run.last_eval:
        shown += f" | held-out {run.last_eval['mlm_loss']:.3f} ratio {run.last_eval['mask_acc_ratio']:.2f}"
    run.bar.update(1, postfix=shown)
    if done % run.cfg.log_every == 0 or done == run.cfg.steps or done == run.start + 1:
        run.metrics.write({"kind": "train", "step": done, "lr": run.opt.param_groups[0]["lr"],
                           "mask_rate": round(run.rates.rate, 4), "train_seconds": round(run.train_time, 3),
                           "rss_mb": rss_mb(), **last})


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
        loop.say(run.bar, f"step {step}  {run.train_time:.0f} s  held-out loss {res['mlm_loss']:.3f}  "
                          f"[MASK] ratio {res['mask_acc_ratio']:.2f}  (acc {res['mask_acc']:.2%} vs "
                          f"{res['baseline_mask_acc']:.2%} for {token!r})")
    return rec


def _checkpoint(run: _Run, step: int) -> None:
    """RUN/checkpoint/ (to resume) and RUN/model/ (for transformers), both replaced atomically (rank 0)."""
    state = {"step": step, "data": run.stream.position, "config": asdict(run.cfg), "train_seconds": run.train_time,
             "tokenizer_vocab_size": run.tok.vocab_size, "world_size": run.world,
             "corpus": corpus_fingerprint(run.corpus, run.fields)}
    if loop.save_checkpoint(run, PRETRAINING, state):
        export_model(run.model, run.tok, run.dir)
        loop.keep(run)


def _finish(run: _Run) -> dict:
    """The final checkpoint and evaluation, the loss curve and summary.json."""
    done, last = run.step, run.last_train
    _checkpoint(run, done)
    run.last_eval = _evaluate(run, done) or run.last_eval
    mcfg = run.model.config
    summary = {"steps": done, "train_seconds": round(run.train_time, 2), "world_size": run.world,
               "arch": run.cfg.arch, "config": asdict(run.cfg), "model_config": mcfg.to_dict(), "final_train": last,
               "final_eval": run.last_eval, "peak_rss_mb": peak_rss_mb(),
               "corpus": corpus_fingerprint(run.corpus, run.fields), "epochs": run.stream.epoch,
               "max_length": run.cfg.max_length}
    return loop.write_summary(run, summary, "loss_curve", plot_loss_curve)
