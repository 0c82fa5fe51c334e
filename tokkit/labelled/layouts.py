"""The layouts of labelled rows: what a row of each kind holds, where its labels are, what the model reads.

A task reads one layout (regression reads classification's rows, its labels as numbers); the
layout is the one place that knows its rows' fields. `make` turns a record into a row, `labels`
lists the labels a row holds (None for a layout without a label set), `texts` gives what the
tokenizer reads of the rows untruncated, and `nested_squad` says whether SQuAD's nested JSON holds it.

>>> layout("tag").make({"tokens": ["The", "jury"], "tags": ["at", "nn"]}, "f.jsonl: line 1", Fields(), True, False, 0)
{'tokens': ['The', 'jury'], 'tags': ['at', 'nn']}
>>> list(LAYOUTS), layout("qa").labels is None
(['classify', 'tag', 'qa'], True)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Optional

from tokkit.errors import TokkitError
from tokkit.labelled.rows import Fields, classify_row, qa_row, tag_row, text_pairs

__all__ = ["RowLayout", "LAYOUTS", "layout", "Fields"]

LabelItems = Iterator[tuple[dict, Optional[int], str]]  # (row, word index or None, label)


def _sentence_labels(rows) -> LabelItems:
    for row in rows:
        if row["label"] is not None:
            yield row, None, row["label"]


def _word_labels(rows) -> LabelItems:
    for row in rows:
        for i, tag in enumerate(row["tags"] or ()):
            yield row, i, tag


def _sentence_texts(rows: list[dict]) -> dict:
    return {"texts": [r["text"] for r in rows], "text_pairs": text_pairs(rows)}


def _word_texts(rows: list[dict]) -> dict:
    return {"texts": [r["tokens"] for r in rows], "is_split_into_words": True}


@dataclass(frozen=True)
class RowLayout:
    """One layout of labelled rows (see the module docstring)."""

    name: str
    make: Callable[..., dict]  # (record, where, fields, labelled, from_table, index) -> row
    labels: Optional[Callable[[list], LabelItems]] = None
    texts: Optional[Callable[[list], dict]] = None  # rows -> tokkit.encode's texts (and pairs or words)
    nested_squad: bool = False


LAYOUTS = {x.name: x for x in (
    RowLayout("classify", classify_row, _sentence_labels, _sentence_texts),
    RowLayout("tag", tag_row, _word_labels, _word_texts),
    RowLayout("qa", qa_row, nested_squad=True),
)}


def layout(name: str) -> RowLayout:
    """The layout called `name`; another name is one TokkitError listing them."""
    try:
        return LAYOUTS[name]
    except (KeyError, TypeError):
        raise TokkitError(f"unknown task {name!r} (one of {', '.join(LAYOUTS)})") from None
