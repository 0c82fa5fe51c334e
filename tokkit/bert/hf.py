"""Read and write Hugging Face folders (config.json + model.safetensors / pytorch_model.bin).

Every tokkit model saves to the folder transformers' matching class loads: a bare encoder
(`AutoModel`), a pretraining model (`AutoModelForMaskedLM`), and a fine-tuned TaskModel
(`AutoModelForSequenceClassification`, `...TokenClassification`, `...QuestionAnswering`, with
id2label and label2id), for both architectures; and tokkit loads such folders back, transformers'
own BERT and ModernBERT folders included. Which tensor goes where is data (tokkit.bert.hf_names).

>>> from tokkit.bert import BertForPreTraining, save_hf   # doctest: +SKIP
>>> model = load_hf(BertForPreTraining, "bert-folder")     # doctest: +SKIP
>>> save_hf(model, tokenizer, "exported")                 # doctest: +SKIP
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

import torch
from torch import nn

from tokkit._files import atomic_dir, read_json
from tokkit.bert.folders import TOKENIZER_FILES, ModelFolder, read_folder
from tokkit.bert.hf_config import config_to_hf
from tokkit.bert.hf_names import ARCHITECTURES, BASE_PREFIX, rename
from tokkit.bert.tasks import TASKS
from tokkit.bert.heads import HeadConfig, TaskModel, arch_of
from tokkit.bert.model import BertForPreTraining, BertModel
from tokkit.bert.modernbert import ModernBertForMaskedLM, ModernBertModel
from tokkit.errors import TokkitError



@dataclass(frozen=True)
class Layout:
    """Where a model's tensors go: its architecture, its heads, and whether the encoder sits under a prefix."""

    arch: str
    heads: tuple  # () for a bare encoder, ("mlm", "nsp"), ("mlm",), or (task,)
    task: Optional[str] = None

    @property
    def ours_prefix(self) -> str:
        return "encoder." if self.heads else ""

    @property
    def architecture(self) -> str:
        return ARCHITECTURES[self.arch, self.task or self.heads]

    def unpooled(self, name: str) -> bool:
        """Whether `name` is a pooler tensor of a model transformers builds without one (BERT's
        token and span models): left out when saving, optional when loading."""
        return self.task is not None and not TASKS[self.task].sentence and name.startswith(self.ours_prefix + "pooler.")

    def hf_names(self, name: str) -> list[str]:
        """transformers' full name(s) for one of the model's tensors."""
        if name.startswith(self.ours_prefix):
            return rename(self.arch, "encoder", name[len(self.ours_prefix):])
        for part in self.heads:
            theirs = rename(self.arch, part, name)
            if theirs:
                return theirs
        raise AssertionError(f"no Hugging Face name for {name}")


def layout_of(model: nn.Module) -> Layout:
    """The layout of a tokkit model (an encoder, a pretraining model or a TaskModel)."""
    if isinstance(model, TaskModel):
        return Layout(arch_of(model.config), (model.task,), model.task)
    kinds = {BertModel: ("bert", ()), ModernBertModel: ("modernbert", ()),
             BertForPreTraining: ("bert", ("mlm", "nsp")), ModernBertForMaskedLM: ("modernbert", ("mlm",))}
    if type(model) not in kinds:
        raise TokkitError("save_hf expects a tokkit encoder, pretraining model or TaskModel, "
                          f"not {type(model).__name__}")
    return Layout(*kinds[type(model)])


def read_hf_state(path: Path) -> dict[str, torch.Tensor]:
    """All tensors of a folder: model.safetensors (possibly sharded) or pytorch_model.bin."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    files: list[Path]
    if (path / "model.safetensors").is_file():
        files = [path / "model.safetensors"]
    elif (path / "model.safetensors.index.json").is_file():
        files = _shards(path / "model.safetensors.index.json")
    elif (path / "pytorch_model.bin").is_file():
        try:  # the one pickle-based format accepted, and only without running code
            return torch.load(path / "pytorch_model.bin", map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - any failure here means a corrupt file
            raise TokkitError(f"{path / 'pytorch_model.bin'}: cannot read checkpoint ({exc})") from None
    else:
        raise TokkitError(f"{path}: no model.safetensors or pytorch_model.bin")
    state: dict[str, torch.Tensor] = {}
    for f in files:
        try:
            state.update(load_file(str(f)))
        except (SafetensorError, OSError, ValueError) as exc:
            raise TokkitError(f"{f}: corrupt checkpoint ({exc})") from None
    return state


def _shards(index_path: Path) -> list[Path]:
    """The shard files a model.safetensors.index.json names: plain file names beside it, each there."""
    index = read_json(index_path)
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise TokkitError(f"{index_path}: field 'weight_map' must be an object of tensor name -> shard file")
    names = list(weight_map.values())
    for name in names:
        # A shard must be a file of this folder: a name like "../x" or "/etc/x" would read elsewhere.
        if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\\" in name:
            raise TokkitError(f"{index_path}: field 'weight_map' names shard {name!r}, not a file name in the folder")
        if not (index_path.parent / name).is_file():
            raise TokkitError(f"{index_path}: shard {name!r} is missing")
    files = [index_path.parent / name for name in sorted(set(names))]
    return files


def _base_relative(state: dict[str, torch.Tensor], arch: str) -> dict[str, torch.Tensor]:
    """Tensor names with the base model's prefix dropped (a bare encoder's folder has none), and old
    TF-converted BERT names (LayerNorm gamma/beta, the decoder's bias) in today's spelling."""
    prefix = BASE_PREFIX[arch]
    out = {}
    for k, v in state.items():
        k = k.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        out[k[len(prefix):] if k.startswith(prefix) else k] = v
    if "cls.predictions.bias" not in out and "cls.predictions.decoder.bias" in out:
        out["cls.predictions.bias"] = out["cls.predictions.decoder.bias"]
    return out


def _build(cls: type, folder: ModelFolder, head: Optional[HeadConfig]):
    arch, cfg, where = folder.arch, folder.config, folder.where
    if cls is TaskModel:
        task = head.task if head is not None else folder.task
        if task is None:
            raise TokkitError(f"{where} describes a {folder.raw.get('architectures')} model, not a fine-tuned task "
                              "model; name the task to fine-tune it")
        own = folder.head(task) if folder.task == task else None
        try:
            return TaskModel(cfg, head or own), own is not None and (head is None or _same_head(head, own))
        except ValueError as exc:
            raise TokkitError(f"{where}: {exc}") from None
    if (cls in (ModernBertModel, ModernBertForMaskedLM)) != (arch == "modernbert"):
        raise TokkitError(f"{where} describes a {folder.raw.get('model_type')!r} model, not one {cls.__name__} reads")
    return cls(cfg), True


def _same_head(head: HeadConfig, own: HeadConfig) -> bool:
    """Whether the folder's head tensors serve `head`: the same task, labels and pooling. A dropout
    of None means "the architecture's default" and matches any; dropout holds no tensor anyway."""
    return replace(head, dropout=None) == replace(own, dropout=None) and head.dropout in (None, own.dropout)


def load_hf(cls: type, path, *, strict: bool = True, head: Optional[HeadConfig] = None):
    """Build `cls` (an encoder, a pretraining model, or TaskModel) from a Hugging Face folder.

    For TaskModel the head comes from the folder's config.json (its task and id2label), or is
    `head`: then the folder's head tensors are used only when the folder was fine-tuned for the
    same head, and a fresh head is initialised otherwise (fine-tuning a pretrained encoder).
    A missing or mis-shaped encoder tensor raises TokkitError naming it; with strict=False
    missing ones keep their random initialisation instead.
    """
    path = Path(path)
    model, with_head = _build(cls, read_folder(path), head)
    layout = layout_of(model)
    state = _base_relative(read_hf_state(path), layout.arch)
    missing = _copy_in(model, layout, state, path, with_head)
    if missing and strict:
        raise TokkitError(f"{path}: checkpoint lacks {len(missing)} tensor(s), e.g. {', '.join(missing[:3])}")
    return model


def _copy_in(model: nn.Module, layout: Layout, state: dict, path: Path, with_head: bool) -> list[str]:
    """Copy the folder's tensors into `model`; return the names it lacks.

    A pooler the folder lacks (a BERT fine-tuned for tagging or spans has none) keeps its fresh
    initialisation, with a warning, as transformers does when such a folder is loaded for a
    sentence task."""
    missing, fresh = [], []
    with torch.no_grad():
        for ours, tensor in model.state_dict().items():
            theirs = layout.hf_names(ours)
            if not (ours.startswith(layout.ours_prefix) or with_head):
                continue
            absent = [t for t in theirs if t not in state]
            if absent and ours.startswith(layout.ours_prefix + "pooler."):
                fresh += [] if layout.unpooled(ours) else absent
                continue
            if absent:
                missing += [] if layout.unpooled(ours) else absent
                continue
            value = torch.cat([state[t] for t in theirs]) if len(theirs) > 1 else state[theirs[0]]
            if value.shape != tensor.shape:
                raise TokkitError(f"{path}: tensor {'+'.join(theirs)} has shape {tuple(value.shape)}, "
                                  f"expected {tuple(tensor.shape)} from config.json")
            if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                # a model with NaN weights predicts NaN scores, which are not JSON
                raise TokkitError(f"{path}: tensor {'+'.join(theirs)} holds NaN or infinite values")
            tensor.copy_(value)
    if fresh and not missing:
        warn(f"{path} has no pooler ({', '.join(fresh)}): it starts from random initialisation")
    return missing


def warn(message: str) -> None:
    """One `tokkit: warning: ...` line on stderr (dropped when stderr cannot be written)."""
    try:
        sys.stderr.write(f"tokkit: warning: {message}\n")
    except (OSError, ValueError):
        pass


def hf_state(model) -> tuple[dict[str, torch.Tensor], str]:
    """The model's tensors under Hugging Face names, and the matching architecture name."""
    layout = layout_of(model)
    prefix = BASE_PREFIX[layout.arch] if layout.heads else ""
    out = {}
    for ours, tensor in model.state_dict().items():
        if layout.unpooled(ours):
            continue
        theirs = layout.hf_names(ours)
        t = tensor.detach().cpu()
        parts = t.split(t.shape[0] // len(theirs)) if len(theirs) > 1 else [t]
        for name, part in zip(theirs, parts):
            full = prefix + name if ours.startswith(layout.ours_prefix) else name
            out[full] = part.contiguous().clone()
    return out, layout.architecture


def _special_ids(tokenizer) -> dict:
    if tokenizer is None:
        return {}
    ids = {name: tokenizer.token_to_id(name) for name in ("[CLS]", "[SEP]")}
    return {k: v for k, v in ids.items() if v is not None}


def write_hf(model, tokenizer, folder) -> None:
    """Write `model` (and `tokenizer`, if given) into an existing folder, as save_hf does."""
    from safetensors.torch import save_file

    state, architecture = hf_state(model)
    layout = layout_of(model)
    save_file(state, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    cfg = config_to_hf(model.config, architecture, _special_ids(tokenizer),
                       head=model.head_config if isinstance(model, TaskModel) else None)
    if tokenizer is not None:
        tokenizer.save(folder)
        if layout.arch == "modernbert":
            _without_token_types(Path(folder) / "tokenizer_config.json")
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


def save_hf(model, tokenizer, directory, *, force: bool = False) -> Path:
    """Write `model` (and `tokenizer`, if given) as a folder transformers' Auto* classes load.

    The tied decoder weight is omitted, as transformers itself does; it re-ties it on load.
    """
    markers = {"config.json", "model.safetensors"} | TOKENIZER_FILES
    with atomic_dir(directory, marker_files=markers, force=force) as tmp:
        write_hf(model, tokenizer, tmp)
    return Path(directory)


def _without_token_types(path: Path) -> None:
    """ModernBERT takes no token_type_ids: the tokenizer must not hand them to it (a fill-mask
    pipeline passes every tokenizer output to the model)."""
    if not path.is_file():
        return
    config = json.loads(path.read_text(encoding="utf-8"))
    config["model_input_names"] = ["input_ids", "attention_mask"]
    path.write_text(json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
