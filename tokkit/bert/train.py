"""BERT pretraining on tokkit's masked batches: AdamW, warm-up + linear decay, checkpoints, eval.

>>> from tokkit.bert import pretrain, PretrainConfig
>>> summary = pretrain("tok/", ["wiki/000.txt"], "run/", config=PretrainConfig(steps=100))  # doctest: +SKIP

Writes RUN_DIR/metrics.jsonl (one JSON line per logged step or evaluation), RUN_DIR/checkpoint/
(safetensors + state.json), RUN_DIR/loss_curve.png and RUN_DIR/summary.json. Works unchanged under
`torchrun --nproc-per-node N` (DistributedDataParallel; rank 0 writes the files).
"""
from __future__ import annotations

import json
import logging
import os
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Optional, Sequence

import torch

import tokkit
from tokkit._progress import Progress
from tokkit.bert import checkpoint as ckpt
from tokkit.bert import data
from tokkit.bert.ddp import finish_distributed, init_distributed, make_optimizer, train_step, wrap
from tokkit.bert.evaluate import evaluate, most_frequent_token, plot_loss_curve
from tokkit.bert.hf import load_hf
from tokkit.bert.memory import return_freed_memory
from tokkit.bert.model import BertConfig, BertForPreTraining
from tokkit.bert.modernbert import ModernBertConfig, ModernBertForMaskedLM
from tokkit.errors import TokkitError

log = logging.getLogger(__name__)
OBJECTIVES = {"mlm": "full", "mlm+nsp": "nsp"}
ARCHS = ("bert", "modernbert")
# Per-architecture recipe defaults (docs/bert-modernbert.md has the runs behind them).
DEFAULT_LR = {"bert": 5e-4, "modernbert": 2e-3}
DEFAULT_MASKING = {"bert": (0.15, 0.15), "modernbert": (0.30, 0.15)}  # (at the start, at the end)


@dataclass
class PretrainConfig:
    """Every setting of a run; saved in the checkpoint so `--resume` continues the same run."""

    objective: str = "mlm"          # "mlm" (full-sentence examples) or "mlm+nsp" (sentence pairs)
    steps: Optional[int] = None     # default: 1000, or no step limit when max_time is set
    batch_size: int = 32
    max_length: int = 128
    lr: Optional[float] = None      # peak; default per architecture (DEFAULT_LR)
    warmup_steps: Optional[int] = None  # default: 5% of steps (100 steps for a time-limited run)
    weight_decay: float = 0.01
    clip: float = 1.0
    seed: int = 0
    mlm_probability: Optional[float] = None      # masking rate at the start; default per architecture
    mlm_probability_end: Optional[float] = None  # rate at the end, linear in between; default per architecture
    arch: Optional[str] = None      # "bert" or "modernbert"; default: resolve_arch()
    eval_every: int = 0             # 0: evaluate only at the end
    eval_every_seconds: Optional[float] = None  # also evaluate each time training time passes a multiple
    eval_blocks: int = 256
    checkpoint_every: int = 500     # 0: only at the end
    log_every: int = 10
    max_time: Optional[float] = None  # stop after this many seconds of training (evaluation excluded)
    threads: Optional[int] = None
    bf16: Optional[bool] = None     # bfloat16 autocast for the forward pass; None: on where it is fast
    device: Optional[str] = None
    model: dict = field(default_factory=dict)  # BertConfig overrides, e.g. {"num_layers": 2}

    def __post_init__(self):
        if self.objective not in OBJECTIVES:
            raise TokkitError(f"objective must be one of {sorted(OBJECTIVES)}, not {self.objective!r}")
        if self.steps is None:
            self.steps = 1000 if self.max_time is None else 10**9
        for name in ("steps", "batch_size", "max_length"):
            if getattr(self, name) <= 0:
                raise TokkitError(f"{name} must be positive, got {getattr(self, name)}")
        if self.lr is not None and not self.lr > 0:
            raise TokkitError(f"lr must be positive, got {self.lr}")
        if self.arch is not None and self.arch not in ARCHS:
            raise TokkitError(f"arch must be one of {list(ARCHS)}, not {self.arch!r}")
        for name in ("mlm_probability", "mlm_probability_end"):
            p = getattr(self, name)
            if p is not None and not 0 < p < 1:
                raise TokkitError(f"{name} must lie strictly between 0 and 1, got {p}")
        if self.eval_every_seconds is not None and not self.eval_every_seconds > 0:
            raise TokkitError(f"eval_every_seconds must be positive, got {self.eval_every_seconds}")

    def with_arch_defaults(self, arch: str) -> "PretrainConfig":
        """A copy with `arch` set and the per-architecture lr and masking filled in where unset."""
        start, end = DEFAULT_MASKING[arch]
        if self.mlm_probability is not None:  # a rate given alone is held for the whole run
            start = end = self.mlm_probability
        return replace(self, arch=arch, lr=self.lr if self.lr is not None else DEFAULT_LR[arch],
                       mlm_probability=start,
                       mlm_probability_end=self.mlm_probability_end if self.mlm_probability_end is not None else end)

    @property
    def warmup(self) -> int:
        if self.warmup_steps is not None:
            return self.warmup_steps
        return 100 if self.steps >= 10**9 else max(1, self.steps // 20)

    def progress(self, step: int, train_seconds: float = 0.0) -> float:
        """How far the run is, 0 to 1: by steps, or by training time when max_time comes first."""
        p = step / self.steps
        if self.max_time:
            p = max(p, train_seconds / self.max_time)
        return min(1.0, p)

    def lr_at(self, step: int, train_seconds: float = 0.0) -> float:
        """Linear warm-up to `lr`, then linear decay to zero at the end of the run.

        The end is `steps`, or `max_time` seconds of training when that comes first; a run bounded
        only by steps decays exactly as (steps - step) / (steps - warmup).
        """
        lr = self.lr if self.lr is not None else DEFAULT_LR[self.arch or "bert"]
        if step < self.warmup:
            return lr * (step + 1) / self.warmup
        by_steps = max(0.0, (self.steps - step) / max(1, self.steps - self.warmup))
        if not self.max_time:
            return lr * by_steps
        by_time = max(0.0, 1.0 - train_seconds / self.max_time)
        return lr * min(by_steps, by_time / 0.95, 1.0)

    def mlm_probability_at(self, step: int, train_seconds: float = 0.0) -> float:
        """The masking rate: linear from mlm_probability to mlm_probability_end over the run."""
        start = self.mlm_probability if self.mlm_probability is not None else 0.15
        end = self.mlm_probability_end if self.mlm_probability_end is not None else start
        return start + (end - start) * self.progress(step, train_seconds)


def _load_tokenizer(tokenizer):
    if isinstance(tokenizer, (str, os.PathLike)):
        if not os.path.exists(tokenizer):
            raise TokkitError(f"{tokenizer}: tokenizer folder does not exist")
        return tokkit.load(tokenizer)
    return tokenizer


def _resume_dir(resume) -> Path:
    p = Path(resume)
    if not p.exists():
        raise TokkitError(f"{p}: cannot resume, folder does not exist")
    if (p / "checkpoint" / "state.json").exists():
        return p / "checkpoint"
    return p


def _step_of(line: str) -> Optional[int]:
    """The step of one metrics.jsonl line, or None for a line that is not a metrics record (dropped)."""
    try:
        rec = json.loads(line)
    except json.JSONDecodeError:
        return None
    step = rec.get("step") if isinstance(rec, dict) else None
    return step if isinstance(step, int) and not isinstance(step, bool) else None


class _Metrics:
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


def resolve_arch(cfg: PretrainConfig, init=None, state: Optional[dict] = None) -> str:
    """The architecture a run trains: the one asked for, the checkpoint's or `init` folder's, BERT
    for the NSP objective (ModernBERT has no NSP head), and ModernBERT for MLM from scratch."""
    if state:
        found = state["model_config"].get("arch", "bert")
    elif init is not None:
        try:
            found = "modernbert" if json.loads((Path(init) / "config.json").read_text(encoding="utf-8")).get(
                "model_type") == "modernbert" else "bert"
        except (OSError, ValueError):
            found = cfg.arch or "bert"  # from_hf reports the unreadable folder
    else:
        found = cfg.arch or ("bert" if cfg.objective == "mlm+nsp" else "modernbert")
    if cfg.arch is not None and cfg.arch != found:
        raise TokkitError(f"--arch {cfg.arch} does not match the {found} model in {init or 'the checkpoint'}")
    if found == "modernbert" and cfg.objective == "mlm+nsp":
        raise TokkitError("ModernBERT has no next-sentence head: use --objective mlm or --arch bert")
    return found


def _build(arch: str, model_config: dict, init=None):
    """(model, its config) for `arch`: from a Hugging Face folder, or freshly initialised."""
    if arch == "modernbert":
        if init is not None:
            model = load_hf(ModernBertForMaskedLM, init)
            return model, model.config
        d = dict(model_config)
        if "dropout" in d:  # BERT's one dropout knob sets ModernBERT's three
            d.setdefault("embedding_dropout", d["dropout"])
            d.setdefault("mlp_dropout", d["dropout"])
        cfg = ModernBertConfig.from_dict(d)
        return ModernBertForMaskedLM(cfg), cfg
    if init is not None:
        model = load_hf(BertForPreTraining, init)
        return model, model.config
    cfg = BertConfig.from_dict(model_config)
    return BertForPreTraining(cfg), cfg


def fast_bf16(device: torch.device) -> bool:
    """Whether bfloat16 autocast speeds training up here: CUDA with bf16, or a CPU with avx512_bf16/AMX."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    if device.type != "cpu":
        return False
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


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
    try:
        import resource
    except ImportError:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def check_run_output(output, *, resume=None, force: bool = False) -> Path:
    """Refuse an output folder that would lose work: an earlier run needs `resume` or `force`,
    anything else in it needs `force`; a file is refused.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); _ = open(os.path.join(d, "metrics.jsonl"), "w").write("{}")
    >>> check_run_output(d)
    Traceback (most recent call last):
    tokkit.errors.TokkitError: ... holds an earlier run: continue it with --resume ... or replace it with --force
    """
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise TokkitError(f"{out}: output path is a file, not a folder")
    if force or not out.is_dir() or not any(out.iterdir()):
        return out
    holds_run = (out / "metrics.jsonl").exists() or (out / "checkpoint").exists()
    if holds_run:
        if resume is not None and Path(resume).resolve() in (out.resolve(), (out / "checkpoint").resolve()):
            return out
        raise TokkitError(f"{out} holds an earlier run: continue it with --resume {out} or replace it with --force")
    raise TokkitError(f"{out}: folder is not empty and holds no tokkit run; use --force to write into it")


def pretrain(tokenizer, corpus: Sequence, output, *, config: Optional[PretrainConfig] = None,
             eval_file=None, resume=None, init=None, progress: Optional[bool] = None, force: bool = False) -> dict:
    """Pretrain a BERT on `corpus` (text files or one shard folder) and write the run to `output`.

    `tokenizer`: a folder or a Tokenizer. `resume`: a run folder or checkpoint folder to continue
    exactly. `init`: a Hugging Face BERT or ModernBERT folder to start from. Returns the summary
    (also in summary.json): steps run, training seconds, final train and eval metrics. With
    `progress` not False, each evaluation is also printed to stderr as it happens.
    """
    out = check_run_output(output, resume=resume, force=force)  # before any work
    return_freed_memory()
    cfg = config or PretrainConfig()
    tok = _load_tokenizer(tokenizer)
    specials = data.check_tokenizer(tok)
    device = torch.device(cfg.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    rank, world = init_distributed(device)
    main_proc = rank == 0
    state: dict = {}
    if resume is not None:
        rdir = _resume_dir(resume)
        state = ckpt.read_state(rdir)
        try:
            cfg = PretrainConfig(**{**state["config"], "steps": cfg.steps, "max_time": cfg.max_time,
                                    "eval_every": cfg.eval_every, "checkpoint_every": cfg.checkpoint_every,
                                    "eval_every_seconds": cfg.eval_every_seconds,
                                    "threads": cfg.threads, "device": cfg.device})
        except TypeError as exc:
            raise TokkitError(f"{rdir}/state.json: field 'config' does not fit this tokkit ({exc})") from None

    arch = resolve_arch(cfg, init, state)
    cfg = cfg.with_arch_defaults(arch)
    if cfg.bf16 is None:
        cfg = replace(cfg, bf16=fast_bf16(device))
    model_config = {"pad_token_id": specials["[PAD]"] or 0, **cfg.model, "vocab_size": tok.vocab_size}
    if state:
        model_config = state["model_config"]
    torch.manual_seed(cfg.seed)
    model, mcfg = _build(arch, model_config, init if not state else None)
    if cfg.max_length > mcfg.max_position_embeddings:
        raise TokkitError(f"--max-length {cfg.max_length} exceeds the model's "
                          f"{mcfg.max_position_embeddings} positions")
    if mcfg.vocab_size != tok.vocab_size:
        src = resume if state else init
        raise TokkitError(f"{src}: checkpoint vocab size {mcfg.vocab_size} does not match the tokenizer's "
                          f"{tok.vocab_size}")
    model.to(device)
    opt = make_optimizer(model, cfg.lr, cfg.weight_decay)
    start = 0
    if state:
        ckpt.load_model_state(rdir, model)
        ckpt.load_optimizer_state(rdir, model, opt)
        start = int(state["step"])
    ddp_model = wrap(model, device)

    kind = OBJECTIVES[cfg.objective]
    dataset = data.make_dataset(tok, corpus, kind=kind, max_length=cfg.max_length, seed=cfg.seed,
                                rank=rank, world_size=world)
    collator = data.make_collator(tok, seed=cfg.seed, mlm_probability=cfg.mlm_probability)
    rates = data.MaskRates(tok, collator, cfg.mlm_probability)
    stream = data.BatchStream(dataset, collator, cfg.batch_size)
    stream.seek(state.get("data", {"epoch": 0, "examples": 0}))

    evalset, baseline = None, None
    if eval_file is not None and main_proc:
        evalset = data.eval_batches(tok, eval_file, blocks=cfg.eval_blocks, max_length=cfg.max_length,
                                    batch_size=64)  # the standard 15% whatever the training rate
        baseline = most_frequent_token(evalset, tok.special_ids if hasattr(tok, "special_ids")
                                       else [i for i in specials.values() if i is not None])
    if main_proc:
        out.mkdir(parents=True, exist_ok=True)
    metrics = _Metrics(out / "metrics.jsonl", main_proc, start)
    train_time = float(state.get("train_seconds", 0.0))

    say = progress is not False and main_proc

    def run_eval(step: int) -> Optional[dict]:
        if evalset is None:
            return None
        res = evaluate(model, evalset, mask_token_id=specials["[MASK]"], baseline_id=baseline, device=device)
        rec = {"kind": "eval", "step": step, "train_seconds": round(train_time, 2), **res,
               "baseline_token": tok.id_to_token(baseline), "rss_mb": rss_mb()}
        metrics.write(rec)
        log.info("step %d eval: %s", step, rec)
        if say:
            _say(bar, f"step {step}  {train_time:.0f} s  held-out loss {res['mlm_loss']:.3f}  "
                      f"[MASK] ratio {res['mask_acc_ratio']:.2f}  (acc {res['mask_acc']:.2%} vs "
                      f"{res['baseline_mask_acc']:.2%} for {tok.id_to_token(baseline)!r})")
        return rec

    def save(step: int) -> None:
        if main_proc:
            ckpt.save_checkpoint(out / "checkpoint", model, opt, {
                "step": step, "data": stream.position, "config": asdict(cfg), "train_seconds": train_time,
                "tokenizer_vocab_size": tok.vocab_size, "world_size": world})

    if state:  # RNG last: building the model and optimizer above must not disturb it
        ckpt.set_rng_state(state["rng"])
    bar = Progress(total=cfg.steps if cfg.steps < 10**9 else None, desc="pretrain", unit=" steps",
                   enabled=progress if main_proc else False)
    bar.set(start)
    ddp_model.train()
    last, last_eval, step = {}, None, start
    every_s = cfg.eval_every_seconds
    next_timed = (int(train_time // every_s) + 1) * every_s if every_s else None
    try:
        for step in range(start, cfg.steps):
            t0 = time.perf_counter()  # training time includes reading and masking the batch
            rates.set(cfg.mlm_probability_at(step, train_time))
            batch = {k: v.to(device) for k, v in next(stream).items()}
            if kind == "full":  # MLM only, even if the collator hands out NSP labels
                batch.pop("next_sentence_label", None)
            for g in opt.param_groups:
                g["lr"] = lr = cfg.lr_at(step, train_time)
            last = train_step(ddp_model, opt, batch, clip=cfg.clip, bf16=cfg.bf16)
            train_time += time.perf_counter() - t0
            done = step + 1
            shown = f"loss {last['loss']:.3f}"
            if last_eval:
                shown += f" | held-out {last_eval['mlm_loss']:.3f} ratio {last_eval['mask_acc_ratio']:.2f}"
            bar.update(1, postfix=shown)
            if done % cfg.log_every == 0 or done == cfg.steps or done == start + 1:
                metrics.write({"kind": "train", "step": done, "lr": lr, "mask_rate": round(rates.rate, 4),
                               "train_seconds": round(train_time, 3), "rss_mb": rss_mb(), **last})
            out_of_time = cfg.max_time is not None and train_time >= cfg.max_time
            timed = next_timed is not None and train_time >= next_timed
            if timed:
                next_timed = (int(train_time // every_s) + 1) * every_s
            if (((cfg.eval_every and done % cfg.eval_every == 0) or timed)
                    and done != cfg.steps and not out_of_time):
                last_eval = run_eval(done)
            if cfg.checkpoint_every and done % cfg.checkpoint_every == 0 and done != cfg.steps:
                save(done)
            if world > 1:  # every rank must stop at the same step, so rank 0's clock decides
                flag = torch.tensor([float(out_of_time)])
                torch.distributed.broadcast(flag, 0)
                out_of_time = bool(flag.item())
            if out_of_time:
                break
    finally:
        bar.close()
    done = step + 1 if cfg.steps > start else start
    save(done)
    last_eval = run_eval(done) or last_eval
    summary = {"steps": done, "train_seconds": round(train_time, 2), "world_size": world, "arch": arch,
               "config": asdict(cfg), "model_config": mcfg.to_dict(), "final_train": last, "final_eval": last_eval,
               "peak_rss_mb": peak_rss_mb()}
    if main_proc:
        png = plot_loss_curve(out / "metrics.jsonl", out / "loss_curve.png")
        summary["loss_curve"] = str(png) if png else None
        (out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True), encoding="utf-8")
    if world > 1:
        finish_distributed()
    return summary
