"""Where fine-tuning starts: the model folder and tokenizer, the head's labels, the model, its optimizer.

MODEL is a tokkit pretraining run (its `model/` folder), a transformers BERT or ModernBERT folder,
or nothing with `from_scratch` (a tokenizer and an architecture). `from_scratch` with a model
keeps its shape and drops its weights: the random-init baseline of the same model.

>>> depth("encoder.layers.0.qkv.weight", 4)
1
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch

from tokkit.bert import checkpoint as ckpt
from tokkit.bert.ddp import adamw
from tokkit.bert.finetune_config import FinetuneConfig
from tokkit.bert.heads import HeadConfig, TaskModel, arch_of
from tokkit.bert.folders import load_tokenizer, model_folder, read_folder
from tokkit.bert.hf import load_hf
from tokkit.bert.recipe import model_config
from tokkit.errors import TokkitError
from tokkit.labelled.lengths import AUTO
from tokkit.labelled import check_labels, label_list

_LAYER = re.compile(r"^encoder\.layers\.(\d+)\.")


@dataclass
class StartingPoint:
    """The tokenizer, the encoder config and (unless from scratch) the folder the weights come from."""

    tokenizer: object
    config: object
    folder: Optional[Path]
    from_scratch: bool
    own_head: Optional[HeadConfig] = None   # the folder's head, when it was fine-tuned for the same task
    state: Optional[dict] = None            # a checkpoint being resumed
    checkpoint: Optional[Path] = None

    def head_for(self, cfg: FinetuneConfig, rows: list, path) -> HeadConfig:
        """The head to train: the checkpoint's, the fine-tuned folder's labels, or the training file's."""
        if self.state:
            return HeadConfig.from_dict(self.state["finetune"]["head"])
        labels = ()
        if cfg.kind.has_labels:
            try:
                labels = self.own_head.labels if self.own_head is not None else tuple(label_list(rows, cfg.kind.rows))
            except TokkitError as exc:
                raise TokkitError(f"{path}: {exc}") from None
            check_labels(rows, cfg.kind.rows, {x: i for i, x in enumerate(labels)}, path)
        try:
            return HeadConfig(cfg.task, labels=labels, pooling=cfg.pooling, dropout=cfg.head_dropout)
        except ValueError as exc:
            raise TokkitError(f"{path}: {exc}") from None

    def build(self, head: HeadConfig, state: Optional[dict] = None) -> TaskModel:
        """The model to train (seed torch first): restored, loaded from the folder, or from random init."""
        try:
            if self.state:
                model = TaskModel(self.config, head)
                ckpt.load_model_state(self.checkpoint, model)
                return model
            if self.from_scratch or self.folder is None:
                return TaskModel(self.config, head)
        except ValueError as exc:
            raise TokkitError(str(exc)) from None
        return load_hf(TaskModel, self.folder, head=head)


def starting_point(model, tokenizer, cfg: FinetuneConfig, *, from_scratch: bool, arch: Optional[str] = None,
                   settings: Optional[dict] = None, state: Optional[dict] = None,
                   checkpoint: Optional[Path] = None) -> StartingPoint:
    """Check the model folder, the tokenizer and their agreement before any work."""
    folder = model_folder(model)
    if folder is None and not (from_scratch and tokenizer is not None) and not state:
        raise TokkitError("name a model to fine-tune (-m), or --from-scratch with a tokenizer (-t)")
    tok = _tokenizer(tokenizer, folder if not state else checkpoint)
    if state:
        ckpt.check_tokenizer(checkpoint, state, tok)
    elif folder is not None and not from_scratch and tokenizer is not None:
        ckpt.check_folder_tokenizer(folder, tok)
    found = read_folder(folder) if folder is not None else None
    if state:
        config = model_config(state["model_config"].get("arch", "bert"), state["model_config"])
    elif found is not None:
        config = found.config
        if arch is not None and arch != arch_of(config):
            raise TokkitError(f"--arch {arch} does not match the {arch_of(config)} model in {model}")
    if state:
        ckpt.refuse_shape_options(settings, "a resumed run keeps its checkpoint's shape", config.to_dict())
    elif found is not None:
        ckpt.refuse_shape_options(settings, f"{model} fixes the model's shape (they go with --from-scratch and no -m)",
                                  config.to_dict())
    else:
        pad = tok.token_to_id("[PAD]") if tok.token_to_id("[PAD]") is not None else 0
        config = model_config(arch or "modernbert", {"pad_token_id": pad, **(settings or {}),
                                                     "vocab_size": tok.vocab_size})
    if config.vocab_size != tok.vocab_size:
        where = f"{found.where}: field 'vocab_size': " if found is not None else ""
        raise TokkitError(f"{where}the model's vocab size {config.vocab_size} does not match the tokenizer's "
                          f"{tok.vocab_size}")
    if cfg.max_length != AUTO and cfg.length > config.max_position_embeddings:  # auto is capped by them
        raise TokkitError(f"--max-length {cfg.length} exceeds the model's {config.max_position_embeddings} positions")
    own = found.head(cfg.task) if found is not None and found.task == cfg.task and not from_scratch else None
    return StartingPoint(tok, config, folder, from_scratch, own, state, checkpoint)


def _tokenizer(tokenizer, folder: Optional[Path]):
    if tokenizer is None:
        if folder is None:
            raise TokkitError("name the tokenizer (-t) of a model trained from scratch")
        tokenizer = folder
    return load_tokenizer(tokenizer)


def depth(name: str, num_layers: int) -> int:
    """A parameter's depth: 0 for the embeddings, i + 1 for layer i, L + 1 for the final norm,
    pooler and head.

    >>> [depth(n, 4) for n in ("encoder.tok.weight", "encoder.layers.2.qkv.weight", "head.classifier.bias")]
    [0, 3, 5]
    """
    m = _LAYER.match(name)
    if m:
        return int(m.group(1)) + 1
    if name.startswith(("encoder.embeddings.", "encoder.tok.", "encoder.emb_norm.")):
        return 0
    return num_layers + 1


def layerwise_optimizer(model: TaskModel, cfg: FinetuneConfig) -> torch.optim.AdamW:
    """AdamW (transformers' fine-tuning defaults: betas 0.9/0.999, eps 1e-8), weight decay on matrices
    only, and each group's `lr_scale` = layer_decay ** (depth below the head): 1 everywhere when
    layer_decay is 1. The embeddings' groups hold `frozen_steps` (cfg.freeze_embeddings): the steps they
    wait at lr 0 while the head and the layers above them settle."""
    L = model.config.num_layers
    groups: dict[tuple, dict] = {}
    for name, p in model.named_parameters():
        d = depth(name, L)
        scale, frozen = cfg.layer_decay ** (L + 1 - d), cfg.freeze_embeddings if d == 0 else 0
        decay = cfg.weight_decay if p.ndim >= 2 else 0.0
        group = groups.setdefault((scale, decay, frozen), {"params": [], "weight_decay": decay, "lr_scale": scale,
                                                           "frozen_steps": frozen})
        group["params"].append(p)
    return adamw(list(groups.values()), cfg.lr, betas=(0.9, 0.999), eps=1e-8)
