"""Training checkpoints without pickle: tensors in safetensors, everything else in a JSON sidecar.

A checkpoint is a folder `RUN_DIR/checkpoint/` holding model.safetensors (tokkit names; its
metadata repeats the model config), optimizer.safetensors (AdamW moments), state.json (step,
data position, RNG states, configs, the tokenizer's fingerprint) and the tokenizer's own files.
It is written beside its destination and renamed in, so an interrupted run keeps the last good one.
Reading it back checks every field a resume relies on against the tensors and the tokenizer, so an
edited or mismatched checkpoint is one clear error, never a traceback or a silently different run.

>>> save_checkpoint("run/checkpoint", model, optimizer, {"step": 10})   # doctest: +SKIP
>>> state = load_checkpoint("run/checkpoint", model, optimizer)         # doctest: +SKIP
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Optional

import torch

from tokkit._files import atomic_dir, parse_json, read_json
from tokkit._shape import MAX_LAYERS, check_shape
from tokkit.errors import TokkitError
from tokkit.bert.folders import TOKENIZER_FILES, holds_tokenizer, load_tokenizer

FORMAT = "tokkit-bert-checkpoint/1"
FILES = {"model.safetensors", "optimizer.safetensors", "state.json"} | TOKENIZER_FILES
_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")


def tokenizer_fingerprint(tokenizer) -> str:
    """sha256 of the tokenizer.json the tokenizer saves (of its vocabulary, for one that saves none).

    tokkit saves byte-identical files for the same tokenizer, so the same vocabulary, normalizer and
    template always give the same fingerprint, and another tokenizer of the same size does not.
    """
    if hasattr(tokenizer, "save"):
        with tempfile.TemporaryDirectory() as folder:
            tokenizer.save(folder)
            path = Path(folder) / "tokenizer.json"
            if path.is_file():
                return hashlib.sha256(path.read_bytes()).hexdigest()
    vocab = "\n".join(tokenizer.id_to_token(i) or "" for i in range(int(tokenizer.vocab_size)))
    return hashlib.sha256(vocab.encode("utf-8")).hexdigest()


def rng_state() -> dict:
    """torch's CPU (and CUDA) generator states, base64 in JSON."""
    out = {"torch": base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode("ascii")}
    if torch.cuda.is_available():
        out["cuda"] = [base64.b64encode(s.numpy().tobytes()).decode("ascii") for s in torch.cuda.get_rng_state_all()]
    return out


def set_rng_state(state: dict) -> None:
    """Restore the generator states of rng_state() (checked by read_state first)."""
    def tensor(b64: str) -> torch.Tensor:
        return torch.frombuffer(bytearray(base64.b64decode(b64)), dtype=torch.uint8)

    try:
        torch.set_rng_state(tensor(state["torch"]))
        if "cuda" in state and torch.cuda.is_available():
            torch.cuda.set_rng_state_all([tensor(s) for s in state["cuda"]])
    except (RuntimeError, ValueError, TypeError) as exc:
        raise TokkitError(f"the checkpoint's random state cannot be restored ({exc})") from None


def _optimizer_tensors(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, torch.Tensor]:
    index = {id(p): name for name, p in model.named_parameters()}
    out = {}
    for p, st in optimizer.state.items():
        for key, value in st.items():
            if torch.is_tensor(value):
                out[f"{index[id(p)]}::{key}"] = value.detach().cpu().reshape(value.shape).contiguous()
    return out


def save_checkpoint(directory, model: torch.nn.Module, optimizer: Optional[torch.optim.Optimizer],
                    state: dict, tokenizer=None) -> Path:
    """Atomically write the model, the optimizer moments, `state` (JSON-able) and the tokenizer's
    files (with its fingerprint in state.json) to `directory`."""
    from safetensors.torch import save_file

    config = model.config.to_dict()
    state = dict(state, format=FORMAT, model_config=config, rng=rng_state())
    with atomic_dir(directory, marker_files=FILES) as tmp:
        if tokenizer is not None:
            tokenizer.save(tmp)
            state["tokenizer_sha256"] = hashlib.sha256(Path(tmp, "tokenizer.json").read_bytes()).hexdigest() \
                if Path(tmp, "tokenizer.json").is_file() else tokenizer_fingerprint(tokenizer)
        save_file({k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()},
                  os.path.join(tmp, "model.safetensors"),
                  # one metadata key only: safetensors writes a map of several in no fixed order
                  metadata={"model_config": json.dumps(config, sort_keys=True)})
        if optimizer is not None:
            save_file(_optimizer_tensors(model, optimizer), os.path.join(tmp, "optimizer.safetensors"))
        with open(os.path.join(tmp, "state.json"), "w", encoding="utf-8") as f:
            json.dump(state, f, indent=1, sort_keys=True)
    return Path(directory)


def read_state(directory) -> dict:
    """The JSON sidecar of a checkpoint folder, with a clear error when it is missing or broken."""
    directory = Path(directory)
    if not directory.is_dir():
        raise TokkitError(f"{directory}: checkpoint folder does not exist")
    path = directory / "state.json"
    if not path.is_file():
        raise TokkitError(f"{directory}: not a checkpoint (no state.json)")
    try:
        state = read_json(path)  # invalid JSON or UTF-8, numbers past Python's digits: one error naming it
    except TokkitError as exc:
        raise TokkitError(f"corrupt checkpoint state: {exc}") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT or "model_config" not in state:
        raise TokkitError(f"{path}: not a {FORMAT} state file")
    _check_state(state, path)
    return state


MAX_STEP = 10**12


def _whole(value, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _check_state(state: dict, path: Path) -> None:
    """Every field a resume relies on, with its type and range: an exact resume or one clear error."""
    def bad(field, why):
        raise TokkitError(f"{path}: field '{field}' {why}; the checkpoint cannot be resumed exactly")

    if not _whole(state.get("step"), 0, MAX_STEP):
        bad("step", f"must be a whole number in [0, {MAX_STEP}], got {state.get('step')!r}")
    data = state.get("data")
    if not isinstance(data, dict):
        bad("data", "(the data position) is missing or not an object")
    for key in ("epoch", "examples"):
        if not _whole(data.get(key), 0, MAX_STEP * 10**6):
            bad(f"data.{key}", f"must be a whole number >= 0, got {data.get(key)!r}")
    for key in ("config", "model_config", "rng"):
        if not isinstance(state.get(key), dict):
            bad(key, "is missing or not an object")
    rng = state["rng"].get("torch")
    try:
        if not isinstance(rng, str) or len(base64.b64decode(rng, validate=True)) != torch.get_rng_state().numel():
            raise ValueError
    except ValueError:
        bad("rng.torch", "is not a saved random state")
    cuda = state["rng"].get("cuda", [])
    if not isinstance(cuda, list) or not all(isinstance(c, str) for c in cuda):
        bad("rng.cuda", "is not a list of saved random states")
    fingerprint = state.get("tokenizer_sha256")
    if fingerprint is not None and not (isinstance(fingerprint, str) and len(fingerprint) == 64):
        bad("tokenizer_sha256", f"is not a sha256 digest, got {fingerprint!r}")
    seconds = state.get("train_seconds", 0.0)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < 1e12:
        bad("train_seconds", f"must be a number >= 0, got {seconds!r}")


def _load_tensors(path: Path) -> dict[str, torch.Tensor]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError) as exc:
        raise TokkitError(f"{path}: corrupt checkpoint ({exc})") from None


def check_model_config(directory, state: dict) -> None:
    """state.json's model_config against model.safetensors: the config it was saved with (in its
    metadata) and the layers it holds, before a model is built from it."""
    from safetensors import SafetensorError, safe_open

    path = Path(directory) / "model.safetensors"
    try:
        with safe_open(str(path), framework="pt") as f:
            saved, names = (f.metadata() or {}).get("model_config"), list(f.keys())
    except (SafetensorError, OSError, ValueError) as exc:
        raise TokkitError(f"{path}: corrupt checkpoint ({exc})") from None
    config = state["model_config"]
    saved = parse_json(saved, f"{path}: metadata 'model_config'") if saved is not None else None
    if saved is not None and saved != config:
        changed = sorted(k for k in set(config) | set(saved) if config.get(k) != saved.get(k)) \
            if isinstance(saved, dict) else ["all of it"]
        raise TokkitError(f"{Path(directory) / 'state.json'}: model_config differs from the model saved beside it "
                          f"({', '.join(changed)}); the checkpoint cannot be resumed exactly")
    try:
        check_shape(config)
    except ValueError as exc:
        raise TokkitError(f"{Path(directory) / 'state.json'}: model_config: {exc}") from None
    layers = {m.group(1) for m in map(_LAYER.search, names) if m}
    stated = config.get("num_layers")
    if not (isinstance(stated, int) and 0 < stated <= MAX_LAYERS) or stated != len(layers):
        raise TokkitError(f"{Path(directory) / 'state.json'}: model_config.num_layers is {stated!r} but "
                          f"model.safetensors holds {len(layers)} layers")


def check_tokenizer(directory, state: dict, tokenizer) -> None:
    """The tokenizer a run continues with must be the one the checkpoint was trained with."""
    saved = state.get("tokenizer_sha256")
    if saved is not None and saved != tokenizer_fingerprint(tokenizer):
        raise TokkitError(f"{directory}: the checkpoint was trained with another tokenizer (its tokenizer.json "
                          f"differs; the checkpoint folder holds the right one)")


def check_folder_tokenizer(folder, tokenizer) -> None:
    """A model folder that carries its tokenizer must be trained further with that one: another of
    the same size would train its embeddings on other ids. A folder without one is taken as it is."""
    folder = Path(folder)
    if not holds_tokenizer(folder):
        return
    if tokenizer_fingerprint(load_tokenizer(folder)) != tokenizer_fingerprint(tokenizer):
        raise TokkitError(f"{folder}: the model was trained with another tokenizer (the one in the folder differs "
                          "from -t's); leave -t out to use the folder's own")


# The command-line names of the model settings, for errors about options that cannot apply.
SHAPE_OPTIONS = {"num_layers": "--layers", "hidden_size": "--hidden", "num_heads": "--heads",
                 "intermediate_size": "--ffn", "max_position_embeddings": "--positions", "dropout": "--dropout",
                 "attention_dropout": "--dropout"}


def refuse_shape_options(settings: Optional[dict], why: str, fixed: Optional[dict] = None) -> None:
    """Shape options given for a model whose shape is already fixed (a folder, a checkpoint) are an
    error; with `fixed` (the shape it has), only those that differ from it."""
    differ = sorted({SHAPE_OPTIONS.get(k, k) for k, v in (settings or {}).items()
                     if fixed is None or fixed.get(k) != v})
    if differ:
        raise TokkitError(f"{', '.join(differ)} cannot apply: {why}")


# Names checkpoints of earlier tokkit versions used, before both models held their encoder as `encoder`.
_OLD_NAMES = (("bert.", "encoder."), ("model.", "encoder."), ("mlm_dense.", "mlm.transform.dense."),
              ("mlm_ln.", "mlm.transform.norm."), ("mlm_bias", "mlm.bias"), ("head_dense.", "mlm.transform.dense."),
              ("head_norm.", "mlm.transform.norm."), ("decoder_bias", "mlm.bias"))


def current_name(name: str) -> str:
    """A tensor name of an earlier checkpoint in today's spelling.

    >>> current_name("bert.layers.0.qkv.weight"), current_name("head_norm.weight")
    ('encoder.layers.0.qkv.weight', 'mlm.transform.norm.weight')
    """
    for old, new in _OLD_NAMES:
        if name.startswith(old):
            return new + name[len(old):]
    return name


def load_model_state(directory, model: torch.nn.Module) -> None:
    """Copy model.safetensors into `model`, refusing missing, extra or mis-shaped tensors."""
    path = Path(directory) / "model.safetensors"
    tensors = {current_name(k): v for k, v in _load_tensors(path).items()}
    own = model.state_dict()
    missing = sorted(set(own) - set(tensors))
    extra = sorted(set(tensors) - set(own))
    if missing or extra:
        raise TokkitError(f"{path}: tensors do not match the model (missing {missing[:3]}, unexpected {extra[:3]})")
    for k, v in tensors.items():
        if v.shape != own[k].shape:
            raise TokkitError(f"{path}: tensor {k} has shape {tuple(v.shape)}, expected {tuple(own[k].shape)}")
    model.load_state_dict(tensors)


def load_optimizer_state(directory, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """Restore AdamW moments and step counts saved by save_checkpoint.

    Every tensor is checked before any is used, as the model loader does: a moment must have its
    parameter's shape and a floating dtype, a step count must be a scalar, and every parameter
    must have its moments. A state from a model of another size is refused, never half-loaded.
    """
    path = Path(directory) / "optimizer.safetensors"
    tensors = {current_name(k): v for k, v in _load_tensors(path).items()}
    params = dict(model.named_parameters())
    seen: dict[str, set] = {}
    for key, value in tensors.items():
        name, _, field = key.partition("::")
        if name not in params:
            raise TokkitError(f"{path}: optimizer state for unknown parameter {name}")
        p = params[name]
        if field == "step":
            if value.numel() != 1:
                raise TokkitError(f"{path}: {key} must hold one number, has shape {tuple(value.shape)}")
        elif field in ("exp_avg", "exp_avg_sq"):
            if value.shape != p.shape or not value.is_floating_point():
                raise TokkitError(f"{path}: tensor {key} has shape {tuple(value.shape)} ({value.dtype}), "
                                  f"expected {tuple(p.shape)} (floating point)")
        else:
            raise TokkitError(f"{path}: unknown optimizer field {key}")
        seen.setdefault(name, set()).add(field)
    for name, fields in seen.items():
        if fields != {"step", "exp_avg", "exp_avg_sq"}:
            raise TokkitError(f"{path}: parameter {name} lacks {sorted({'step', 'exp_avg', 'exp_avg_sq'} - fields)}")
    for key, value in tensors.items():
        name, _, field = key.partition("::")
        p = params[name]
        optimizer.state[p][field] = value.to(p.device, p.dtype) if field != "step" else value


def load_checkpoint(directory, model: torch.nn.Module, optimizer: Optional[torch.optim.Optimizer] = None) -> dict:
    """Load model (and optimizer) from a checkpoint folder; return its state dict (step, data position...)."""
    state = read_state(directory)
    load_model_state(directory, model)
    if optimizer is not None:
        load_optimizer_state(directory, model, optimizer)
    return state
