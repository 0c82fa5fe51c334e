"""The pretraining recipe: every setting of a run, checked; the schedules; the architecture and its model.

>>> cfg = PretrainConfig(steps=100, warmup_steps=10, lr=1e-3)
>>> round(cfg.lr_at(55), 6), cfg.mlm_probability_at(50)
(0.0005, 0.15)
>>> PretrainConfig(log_every=0)
Traceback (most recent call last):
tokkit.errors.TokkitError: log_every (--log-every) must be a whole number >= 1, got 0
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional

import torch

from tokkit._shape import MAX_LAYERS, MAX_SEED
from tokkit._threads import MAX_THREADS
from tokkit.bert.hf import load_hf
from tokkit.bert.folders import read_folder
from tokkit.bert.model import BertConfig, BertForPreTraining
from tokkit.bert.electra import Electra
from tokkit.bert.modernbert import ModernBertConfig, ModernBertForMaskedLM, ModernBertModel
from tokkit.bert.schedule import Schedule
from tokkit.bert.settings import check_non_negative, check_positive, check_share, check_whole
from tokkit.errors import TokkitError
from tokkit.labelled.lengths import AUTO
from tokkit.pretraining.shuffle import DEFAULT_BUFFER

OBJECTIVES = {"mlm": "full", "mlm+nsp": "nsp", "electra": "full"}  # objective -> the examples it reads
ARCHS = ("bert", "modernbert")
# Per-architecture recipe defaults (docs/bert-modernbert.md has the runs behind them).
DEFAULT_LR = {"bert": 5e-4, "modernbert": 1e-3}
DEFAULT_MASKING = {"bert": (0.15, 0.15), "modernbert": (0.30, 0.15)}  # (at the start, at the end)
NO_STEP_LIMIT = 10**9
MAX_BATCH = (1 << 31) - 1  # far past any memory; a batch of more than sys.maxsize examples cannot be cut at all


@dataclass
class PretrainConfig:
    """Every setting of a run; saved in the checkpoint so `--resume` continues the same run."""

    objective: str = "mlm"          # "mlm", "mlm+nsp" (sentence pairs) or "electra" (replaced-token detection)
    steps: Optional[int] = None     # default: 1000, or no step limit when max_time is set
    batch_size: int = 16            # 600 s on 2 CPU threads: [MASK] ratio 3.60 at 16, 3.08 at 32 (bert-modernbert.md)
    max_length: int | str = 128     # "auto": fitted to the labelled corpus files' rows, a number once resolved
    lr: Optional[float] = None      # peak; default per architecture (DEFAULT_LR)
    warmup_steps: Optional[int] = None  # default: 5% of steps
    warmup_seconds: Optional[float] = None  # in training seconds; default 5% of max_time when steps is unset
    weight_decay: float = 0.01
    clip: float = 1.0
    seed: int = 0
    mlm_probability: Optional[float] = None      # masking rate at the start; default per architecture
    mlm_probability_end: Optional[float] = None  # rate at the end, linear in between; default per architecture
    whole_word_masking: bool = False  # choose whole words for masking (every sub-token of a chosen word)
    generator_layers: int = 1       # electra: the generator's layers (the encoder's width, its embeddings)
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
    shuffle: bool = True            # documents in a new order each epoch, examples through a shuffle buffer
    shuffle_buffer: int = DEFAULT_BUFFER  # examples the shuffle buffer holds (0: documents shuffled only)
    model: dict = field(default_factory=dict)  # BertConfig overrides, e.g. {"num_layers": 2}

    def __post_init__(self):
        if self.objective not in OBJECTIVES:
            raise TokkitError(f"objective must be one of {sorted(OBJECTIVES)}, not {self.objective!r}")
        if self.arch is not None and self.arch not in ARCHS:
            raise TokkitError(f"arch must be one of {list(ARCHS)}, not {self.arch!r}")
        if self.steps is None:
            self.steps = 1000 if self.max_time is None else NO_STEP_LIMIT
        self._check_counts()
        self._check_numbers()

    def _check_counts(self) -> None:
        """Whole-number settings, each with its least value (None allowed where it means a default)."""
        least = {"steps": 1, "batch_size": 1, "max_length": 1, "seed": 0, "eval_every": 0, "eval_blocks": 1,
                 "checkpoint_every": 0, "log_every": 1, "shuffle_buffer": 0, "warmup_steps": 0, "threads": 1,
                 "generator_layers": 1}
        if self.max_length == AUTO:  # resolved in set-up, against the corpus and the model's positions
            del least["max_length"]
        check_whole(self, least, optional=("warmup_steps", "threads"),
                    most={"seed": MAX_SEED, "threads": MAX_THREADS, "generator_layers": MAX_LAYERS,
                          "batch_size": MAX_BATCH, "steps": NO_STEP_LIMIT})
        if self.steps >= NO_STEP_LIMIT and self.max_time is None:  # NO_STEP_LIMIT means "bounded by time"
            raise TokkitError(f"steps (--steps) must be below {NO_STEP_LIMIT:,} without --max-time, got {self.steps}")

    def _check_numbers(self) -> None:
        """Real-valued settings: finite, and in range."""
        check_positive(self, ("lr", "max_time", "eval_every_seconds", "warmup_seconds"))
        check_non_negative(self, ("weight_decay", "clip"))
        check_share(self, ("mlm_probability", "mlm_probability_end"))

    def with_arch_defaults(self, arch: str) -> "PretrainConfig":
        """A copy with `arch` set and the per-architecture lr and masking filled in where unset."""
        start, end = DEFAULT_MASKING[arch]
        if self.mlm_probability is not None:  # a rate given alone is held for the whole run
            start = end = self.mlm_probability
        return replace(self, arch=arch, lr=self.lr if self.lr is not None else DEFAULT_LR[arch],
                       mlm_probability=start,
                       mlm_probability_end=self.mlm_probability_end if self.mlm_probability_end is not None else end)

    @property
    def warmup_time(self) -> Optional[float]:
        """Warm-up seconds when the warm-up is counted in training time: `warmup_seconds`, or 5% of
        `max_time` for a run bounded by time without --warmup-steps (the same share of the run on
        any machine, where a step count would not be)."""
        if self.warmup_seconds:
            return self.warmup_seconds
        if self.warmup_steps is None and self.max_time:
            return 0.05 * self.max_time
        return None

    @property
    def schedule(self) -> Schedule:
        """The run's learning-rate schedule: planned in time when max_time is set, whatever `steps` says."""
        lr = self.lr if self.lr is not None else DEFAULT_LR[self.arch or "bert"]
        steps = None if self.steps >= NO_STEP_LIMIT else self.steps
        warmup_steps = self.warmup_steps
        if warmup_steps is None and not self.max_time and not self.warmup_seconds:
            warmup_steps = max(1, self.steps // 20)
        return Schedule(peak=lr, steps=steps, seconds=self.max_time, warmup_steps=warmup_steps,
                        warmup_seconds=self.warmup_time if warmup_steps is None else None)

    def progress(self, step: int, train_seconds: float = 0.0) -> float:
        """How far the run is, 0 to 1: by steps, or by training time when max_time comes first."""
        return self.schedule.progress(step, train_seconds)

    def lr_at(self, step: int, train_seconds: float = 0.0) -> float:
        """Linear warm-up to `lr`, then linear decay to zero at the end of the run (see Schedule)."""
        return self.schedule.lr(step, train_seconds)

    def mlm_probability_at(self, step: int, train_seconds: float = 0.0) -> float:
        """The masking rate: linear from mlm_probability to mlm_probability_end over the run."""
        start = self.mlm_probability if self.mlm_probability is not None else 0.15
        end = self.mlm_probability_end if self.mlm_probability_end is not None else start
        return start + (end - start) * self.progress(step, train_seconds)


def resolve_arch(cfg: PretrainConfig, init=None, state: Optional[dict] = None) -> str:
    """The architecture a run trains: the one asked for, the checkpoint's or `init` folder's, BERT
    for the NSP objective (ModernBERT has no NSP head), and ModernBERT for MLM from scratch."""
    if state:
        found = state["model_config"].get("arch", "bert")
    elif init is not None:
        found = read_folder(init).arch
    else:
        found = cfg.arch or ("bert" if cfg.objective == "mlm+nsp" else "modernbert")
    if found not in ARCHS:
        raise TokkitError(f"the checkpoint's model_config names an unknown architecture {found!r}")
    if cfg.arch is not None and cfg.arch != found:
        raise TokkitError(f"--arch {cfg.arch} does not match the {found} model in {init or 'the checkpoint'}")
    if found == "modernbert" and cfg.objective == "mlm+nsp":
        raise TokkitError("ModernBERT has no next-sentence head: use --objective mlm or --arch bert")
    if found == "bert" and cfg.objective == "electra":
        raise TokkitError("replaced-token detection trains ModernBERT encoders: use --arch modernbert")
    return found


def model_config(arch: str, settings: dict):
    """The BertConfig or ModernBertConfig for `settings` (BERT's one `dropout` also sets ModernBERT's)."""
    d = dict(settings)
    try:
        if arch == "modernbert":
            if "dropout" in d:  # BERT's one dropout knob sets ModernBERT's three
                d.setdefault("embedding_dropout", d["dropout"])
                d.setdefault("mlp_dropout", d.pop("dropout"))
            return ModernBertConfig.from_dict(d)
        return BertConfig.from_dict(d)
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise TokkitError(f"model settings do not describe a {arch} model ({exc})") from None


def build_model(arch: str, settings: dict, init=None, *, objective: str = "mlm", generator_layers: int = 1):
    """(model, its config) for `arch` and `objective`: from a Hugging Face folder, or freshly initialised.

    The electra objective wraps the encoder with its generator and detection head; from a folder,
    its encoder starts from the folder's.
    """
    if objective == "electra":
        cfg = load_hf(ModernBertModel, init).config if init is not None else model_config(arch, settings)
        model = Electra(cfg, generator_layers=generator_layers)
        if init is not None:
            model.encoder.load_state_dict(load_hf(ModernBertModel, init).state_dict())
        return model, cfg
    cls = ModernBertForMaskedLM if arch == "modernbert" else BertForPreTraining
    if init is not None:
        model = load_hf(cls, init)
        return model, model.config
    cfg = model_config(arch, settings)
    return cls(cfg), cfg


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


def pick_device(name: Optional[str]) -> torch.device:
    """The device a run trains on: `name`, or CUDA when available; a clear error for one torch cannot use."""
    if name is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise TokkitError(f"--device {name!r} is not a device torch knows (cpu, cuda, cuda:1, ...)") from None
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0 or (device.index or 0) >= count:
            have = f"{count} CUDA device(s)" if count else "no CUDA device"
            raise TokkitError(f"--device {name}: this machine has {have}")
    if device.type == "meta":
        raise TokkitError(f"--device {name}: tensors there hold no data; train on cpu or cuda")
    try:
        torch.empty(1, device=device)
    except (RuntimeError, AssertionError, NotImplementedError) as exc:
        raise TokkitError(f"--device {name}: torch cannot use it here ({str(exc).splitlines()[0]})") from None
    return device
