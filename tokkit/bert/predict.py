"""Use a fine-tuned folder: load it, score a labelled file, predict labels, tags or answers.

>>> ft = load_finetuned("out/")                                                   # doctest: +SKIP
>>> predict_rows(ft, [{"text": "A gripping, funny film.", "text_pair": None}])   # doctest: +SKIP
[{'label': 'fresh', 'score': 0.93}]
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np
import torch

from tokkit.bert import task_data as td
from tokkit.bert.heads import TaskModel
from tokkit.bert.folders import load_tokenizer, read_folder
from tokkit.bert.hf import load_hf
from tokkit.bert.recipe import fast_bf16, pick_device
from tokkit.errors import TokkitError
from tokkit.labelled import Fields, check_labels, read_examples

DEFAULTS = {"max_length": None, "stride": 128, "n_best": 20, "max_answer_length": 30, "label_all_subtokens": False}


@dataclass
class FineTuned:
    """A fine-tuned model, its tokenizer, and how its inputs are read (config.json's "tokkit" settings)."""

    model: TaskModel
    tokenizer: object
    settings: dict
    device: torch.device
    bf16: bool

    @property
    def task(self) -> str:
        return self.model.task

    @property
    def head(self):
        return self.model.head_config

    @property
    def kind(self):
        """The task object (tokkit.bert.tasks)."""
        return self.head.kind

    def data(self, rows: list, *, labelled: bool) -> td.TaskData:
        s = self.settings
        length = s["max_length"] or min(self.model.config.max_position_embeddings, self.kind.default_length)
        data = td.task_data(self.task, self.tokenizer, rows, self.head, max_length=length, stride=s["stride"],
                            label_all_subtokens=s["label_all_subtokens"], labelled=labelled)
        td.check_fits(data, self.model.config, "the input")
        return data


def load_finetuned(folder, *, device: Optional[str] = None, threads: Optional[int] = None) -> FineTuned:
    """The model and tokenizer of a fine-tuned transformers folder (tokkit's or transformers' own)."""
    folder = Path(folder)
    found = read_folder(folder)
    if found.task is None:
        raise TokkitError(f"{folder}: config.json names {found.raw.get('architectures')}, not a fine-tuned "
                          "classification, tagging or question-answering model")
    if threads:
        torch.set_num_threads(threads)
    where = pick_device(device)
    model = load_hf(TaskModel, folder).to(where).eval()
    tok = load_tokenizer(folder)
    settings = {**DEFAULTS, **{k: v for k, v in (found.raw.get("tokkit") or {}).items() if k in DEFAULTS}}
    check_vocab_fits(model.config, tok, folder / "config.json")
    return FineTuned(model, tok, settings, where, fast_bf16(where))


def check_vocab_fits(config, tokenizer, where) -> None:
    """Every id of the tokenizer must have an embedding in the model."""
    if tokenizer.vocab_size > config.vocab_size:
        raise TokkitError(f"{where}: field 'vocab_size' is {config.vocab_size}, but the tokenizer has "
                          f"{tokenizer.vocab_size} tokens: its last ids have no embedding")


def evaluate_file(ft: FineTuned, path, *, fields: Fields = Fields(), unseen_labels: str = "error") -> dict:
    """The task's metrics of `ft` on a labelled file; a label the model does not know is an error,
    or with unseen_labels="wrong" a prediction it cannot make (scored as wrong)."""
    rows = read_examples(path, ft.kind.rows, fields=fields)
    if ft.kind.has_labels and unseen_labels == "error":
        check_labels(rows, ft.kind.rows, {x: i for i, x in enumerate(ft.head.labels)}, path)
    data = ft.data(rows, labelled=False)
    outputs = td.predict(ft.model, data, device=ft.device, bf16=ft.bf16)
    return td.score(data, _decode(ft, data, outputs), ft.head)


def _decode(ft: FineTuned, data: td.TaskData, outputs: np.ndarray) -> list:
    return td.decode(data, outputs, ft.head, n_best=ft.settings["n_best"],
                     max_answer_length=ft.settings["max_answer_length"])


def rows_from_lines(ft: FineTuned, lines: list[str]) -> list[dict]:
    """Rows for plain-text input, one text per line: a sentence to classify, or a text to tag
    (its words found as the tokenizer's pre-tokenizer cuts them)."""
    return ft.kind.plain_rows(lines, ft.tokenizer)


def predict_rows(ft: FineTuned, rows: list[dict]) -> list[dict]:
    """One JSON-able prediction per row: {"label", "score"} (classify), {"value"} (regress),
    {"tokens", "tags"} (tag), or {"id", "answer", "start", "end", "score"} (qa)."""
    if not rows:
        return []
    data = ft.data(rows, labelled=False)
    outputs = td.predict(ft.model, data, device=ft.device, bf16=ft.bf16)
    return ft.kind.predictions(rows, _decode(ft, data, outputs), outputs)


def read_rows(ft: FineTuned, path, *, fields: Fields = Fields()) -> list[dict]:
    """Unlabelled rows of a JSONL/JSON/CSV/TSV file."""
    return read_examples(path, ft.kind.rows, fields=fields, labelled=False)
