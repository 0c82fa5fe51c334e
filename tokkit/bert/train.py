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
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import torch

import tokkit
from tokkit._progress import Progress
from tokkit.bert import checkpoint as ckpt
from tokkit.bert import data
from tokkit.bert.ddp import finish_distributed, init_distributed, make_optimizer, train_step, wrap
from tokkit.bert.evaluate import evaluate, most_frequent_token, plot_loss_curve
from tokkit.bert.model import BertConfig, BertForPreTraining
from tokkit.errors import TokkitError

log = logging.getLogger(__name__)
OBJECTIVES = {"mlm": "full", "mlm+nsp": "nsp"}


@dataclass
class PretrainConfig:
    """Every setting of a run; saved in the checkpoint so `--resume` continues the same run."""

    objective: str = "mlm"          # "mlm" (full-sentence examples) or "mlm+nsp" (sentence pairs)
    steps: int = 1000
    batch_size: int = 32
    max_length: int = 128
    lr: float = 5e-4
    warmup_steps: Optional[int] = None  # default: 5% of steps
    weight_decay: float = 0.01
    clip: float = 1.0
    seed: int = 0
    mlm_probability: float = 0.15
    eval_every: int = 0             # 0: evaluate only at the end
    eval_blocks: int = 256
    checkpoint_every: int = 500     # 0: only at the end
    log_every: int = 10
    max_time: Optional[float] = None  # stop after this many seconds of training (evaluation excluded)
    threads: Optional[int] = None
    bf16: bool = False              # bfloat16 autocast for the forward pass (fast on CPUs with avx512_bf16)
    device: Optional[str] = None
    model: dict = field(default_factory=dict)  # BertConfig overrides, e.g. {"num_layers": 2}

    def __post_init__(self):
        if self.objective not in OBJECTIVES:
            raise TokkitError(f"objective must be one of {sorted(OBJECTIVES)}, not {self.objective!r}")
        for name in ("steps", "batch_size", "max_length"):
            if getattr(self, name) <= 0:
                raise TokkitError(f"{name} must be positive, got {getattr(self, name)}")
        if not self.lr > 0:
            raise TokkitError(f"lr must be positive, got {self.lr}")

    @property
    def warmup(self) -> int:
        return self.warmup_steps if self.warmup_steps is not None else max(1, self.steps // 20)

    def lr_at(self, step: int) -> float:
        """Linear warm-up to `lr`, then linear decay to zero at `steps`."""
        if step < self.warmup:
            return self.lr * (step + 1) / self.warmup
        return self.lr * max(0.0, (self.steps - step) / max(1, self.steps - self.warmup))


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


class _Metrics:
    """metrics.jsonl, appended line by line; a resumed run first drops lines past its checkpoint."""

    def __init__(self, path: Path, enabled: bool, start_step: int):
        self.path = path
        self.enabled = enabled
        if enabled:
            keep = []
            if start_step and path.exists():
                keep = [ln for ln in path.read_text(encoding="utf-8").splitlines()
                        if ln.strip() and json.loads(ln)["step"] <= start_step]
            path.write_text("".join(ln + "\n" for ln in keep), encoding="utf-8")

    def write(self, rec: dict) -> None:
        if self.enabled:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(rec, sort_keys=True) + "\n")


def pretrain(tokenizer, corpus: Sequence, output, *, config: Optional[PretrainConfig] = None,
             eval_file=None, resume=None, init=None, progress: Optional[bool] = None) -> dict:
    """Pretrain a BERT on `corpus` (text files or one shard folder) and write the run to `output`.

    `tokenizer`: a folder or a Tokenizer. `resume`: a run folder or checkpoint folder to continue
    exactly. `init`: a Hugging Face BERT folder to start from. Returns the summary (also in
    summary.json): steps run, training seconds, final train and eval metrics.
    """
    cfg = config or PretrainConfig()
    tok = _load_tokenizer(tokenizer)
    specials = data.check_tokenizer(tok)
    out = Path(output)
    device = torch.device(cfg.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    rank, world = init_distributed(device)
    main_proc = rank == 0
    state: dict = {}
    if resume is not None:
        rdir = _resume_dir(resume)
        state = ckpt.read_state(rdir)
        cfg = PretrainConfig(**{**state["config"], "steps": cfg.steps, "max_time": cfg.max_time,
                                "eval_every": cfg.eval_every, "checkpoint_every": cfg.checkpoint_every,
                                "threads": cfg.threads, "device": cfg.device})

    mcfg = BertConfig.from_dict({**BertConfig(vocab_size=tok.vocab_size, pad_token_id=specials["[PAD]"] or 0)
                                 .to_dict(), **cfg.model, "vocab_size": tok.vocab_size})
    if state:
        mcfg = BertConfig.from_dict(state["model_config"])
    if cfg.max_length > mcfg.max_position_embeddings:
        raise TokkitError(f"--max-length {cfg.max_length} exceeds the model's "
                          f"{mcfg.max_position_embeddings} positions")
    torch.manual_seed(cfg.seed)
    if init is not None and not state:
        model = BertForPreTraining.from_hf(init)
        mcfg = model.config
    else:
        model = BertForPreTraining(mcfg)
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

    def run_eval(step: int) -> Optional[dict]:
        if evalset is None:
            return None
        res = evaluate(model, evalset, mask_token_id=specials["[MASK]"], baseline_id=baseline, device=device)
        rec = {"kind": "eval", "step": step, "train_seconds": round(train_time, 2), **res,
               "baseline_token": tok.id_to_token(baseline)}
        metrics.write(rec)
        log.info("step %d eval: %s", step, rec)
        return rec

    def save(step: int) -> None:
        if main_proc:
            ckpt.save_checkpoint(out / "checkpoint", model, opt, {
                "step": step, "data": stream.position, "config": asdict(cfg), "train_seconds": train_time,
                "tokenizer_vocab_size": tok.vocab_size, "world_size": world})

    if state:  # RNG last: building the model and optimizer above must not disturb it
        ckpt.set_rng_state(state["rng"])
    bar = Progress(total=cfg.steps, desc="pretrain", unit=" steps", enabled=progress if main_proc else False)
    bar.set(start)
    ddp_model.train()
    last, last_eval, step = {}, None, start
    try:
        for step in range(start, cfg.steps):
            t0 = time.perf_counter()  # training time includes reading and masking the batch
            batch = {k: v.to(device) for k, v in next(stream).items()}
            if kind == "full":  # MLM only, even if the collator hands out NSP labels
                batch.pop("next_sentence_label", None)
            for g in opt.param_groups:
                g["lr"] = cfg.lr_at(step)
            last = train_step(ddp_model, opt, batch, clip=cfg.clip, bf16=cfg.bf16)
            train_time += time.perf_counter() - t0
            done = step + 1
            bar.update(1, postfix=f"loss {last['loss']:.3f}")
            if done % cfg.log_every == 0 or done == cfg.steps or done == start + 1:
                metrics.write({"kind": "train", "step": done, "lr": cfg.lr_at(step),
                               "train_seconds": round(train_time, 3), **last})
            out_of_time = cfg.max_time is not None and train_time >= cfg.max_time
            if cfg.eval_every and done % cfg.eval_every == 0 and done != cfg.steps and not out_of_time:
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
    summary = {"steps": done, "train_seconds": round(train_time, 2), "world_size": world,
               "config": asdict(cfg), "model_config": mcfg.to_dict(), "final_train": last, "final_eval": last_eval}
    if main_proc:
        png = plot_loss_curve(out / "metrics.jsonl", out / "loss_curve.png")
        summary["loss_curve"] = str(png) if png else None
        (out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True), encoding="utf-8")
    if world > 1:
        finish_distributed()
    return summary
