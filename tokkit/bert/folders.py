"""What a path names: a tokkit run or a transformers model folder (its config.json read once), or a tokenizer.

`model_folder` decides whether MODEL is a tokkit run (its `model/` folder) or a model folder;
`read_folder` is the one reader of a folder's config.json, every field checked
(tokkit.bert.hf_config.read_config), with the encoder config, architecture, task and head it
describes; `load_tokenizer` turns a tokenizer argument (a Tokenizer, or a folder or file) into a
Tokenizer, and `holds_tokenizer` says whether a model or checkpoint folder carries one.

>>> import json, tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "config.json").write_text(json.dumps({"model_type": "modernbert", "vocab_size": 100,
...     "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 24,
...     "architectures": ["ModernBertForTokenClassification"], "id2label": {"0": "O", "1": "A"}}))
>>> folder = read_folder(d)
>>> folder.arch, folder.task, folder.head("tag").labels, folder.config.hidden_size
('modernbert', 'tag', ('O', 'A'), 16)
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from tokkit.bert.heads import HeadConfig
from tokkit.bert.hf_config import arch_of_hf, config_from_hf, head_from_hf, read_config
from tokkit.bert.tasks import task_of_architecture
from tokkit.errors import TokkitError
from tokkit.tokenizer import Tokenizer
from tokkit.tokenizer import load as _load

# The files a tokenizer leaves in a model or checkpoint folder.
TOKENIZER_FILES = {"tokenizer.json", "vocab.txt", "vocab.json", "merges.txt", "tokenizer_config.json",
                   "special_tokens_map.json"}
VOCABULARIES = ("tokenizer.json", "vocab.txt", "vocab.json")  # any of them: the folder carries a tokenizer


def model_folder(model) -> Optional[Path]:
    """The transformers folder `model` names: a pretraining run's model/, or the folder itself."""
    if model is None:
        return None
    path = Path(model)
    if (path / "checkpoint" / "state.json").is_file() and (path / "model" / "config.json").is_file():
        return path / "model"
    if (path / "config.json").is_file():
        return path
    if not path.exists():
        raise TokkitError(f"{path}: no such model folder")
    raise TokkitError(f"{path}: neither a tokkit run (RUN/model/) nor a transformers model folder (config.json)")


@dataclass
class ModelFolder:
    """A model folder and its config.json, read and checked."""

    path: Path
    raw: dict = field(repr=False)

    @property
    def where(self) -> str:
        """config.json's path, for errors."""
        return str(self.path / "config.json")

    @property
    def config(self):
        """The encoder config (BertConfig or ModernBertConfig) config.json describes."""
        return config_from_hf(self.raw, self.where)

    @property
    def arch(self) -> str:
        """"bert" or "modernbert"; another model type is one TokkitError."""
        return arch_of_hf(self.raw, self.where)

    @property
    def task(self) -> Optional[str]:
        """The task the folder was fine-tuned for (from its architectures), None for an encoder or MLM folder."""
        return folder_task(self.raw)

    def head(self, task: str) -> HeadConfig:
        """The head config.json describes for `task`: its labels, pooling and dropout."""
        return head_from_hf(self.raw, task, self.where)


def read_folder(path) -> ModelFolder:
    """The model folder at `path`, its config.json read and checked: the one reader every command uses."""
    return ModelFolder(Path(path), read_config(path))


def folder_task(raw: dict) -> Optional[str]:
    """The task of a config.json mapping (from its architectures), None for an encoder or MLM folder."""
    names = raw.get("architectures") or []
    return task_of_architecture(names[0]) if isinstance(names, list) and names else None


def load_tokenizer(tokenizer) -> Tokenizer:
    """`tokenizer` as a Tokenizer: itself, or loaded from the folder or file it names."""
    if isinstance(tokenizer, (str, os.PathLike)):
        if not os.path.exists(tokenizer):
            raise TokkitError(f"{tokenizer}: tokenizer folder does not exist")
        return _load(tokenizer)
    return tokenizer


def holds_tokenizer(folder, names=VOCABULARIES) -> bool:
    """Whether `folder` carries a tokenizer (one of `names`)."""
    return any((Path(folder) / name).is_file() for name in names)
