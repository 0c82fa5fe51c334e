"""The label set of a training file, and the check that other files use no label outside it.

>>> rows = [{"label": "rotten", "line": 1}, {"label": "fresh", "line": 2}]
>>> label_list(rows, "classify")
['fresh', 'rotten']
>>> label_list([{"tags": ["10", "9", "x"]}], "tag"), label_list([{"tags": ["10", "9"]}], "tag")
(['10', '9', 'x'], ['9', '10'])
"""
from __future__ import annotations

import re
from typing import Iterable, Iterator, Mapping

from tokkit.errors import TokkitError
from tokkit.labelled.layouts import layout


# A label sorts as a number when it is a whole number of at most this many digits: int() of a longer
# one is refused past Python's 4,300 digits, and no label set numbers its classes that far.
MAX_NUMBER_DIGITS = 18
_WHOLE = re.compile(rf"-?[0-9]{{1,{MAX_NUMBER_DIGITS}}}")


def label_list(rows: Iterable[dict], task: str) -> list[str]:
    """The labels the rows use (tags for "tag"), sorted: by value when every label is a whole
    number of at most 18 digits (so "0", "1", ..., "10" keep their order), else as strings.

    >>> label_list([{"label": "--1"}, {"label": "2"}], "classify")
    ['--1', '2']
    """
    labels = {label for _, _, label in _labels(rows, task)}
    if not labels:
        raise TokkitError("the rows hold no labels")
    if all(_WHOLE.fullmatch(label) for label in labels):
        return sorted(labels, key=lambda label: (int(label), label))
    return sorted(labels)


def check_labels(rows: Iterable[dict], task: str, label2id: Mapping[str, int], path=None) -> None:
    """Refuse, in one TokkitError naming the first such label and its line, a label that is not in
    `label2id` (a label a dev or test file has that the training file never had). Rows without
    labels (read with labelled=False) pass."""
    for row, word, label in _labels(rows, task):
        if label not in label2id:
            where = f"{path}: " if path is not None else ""
            line = f"line {row['line']}: " if row.get("line") is not None else ""
            word = f" (word {word} {row['tokens'][word]!r})" if word is not None else ""
            known = ", ".join(list(label2id)[:10]) + (", ..." if len(label2id) > 10 else "")
            raise TokkitError(f"{where}{line}label {label!r}{word} is not one of the {len(label2id)} labels the "
                              f"model was trained on ({known})")


def _labels(rows: Iterable[dict], task: str) -> Iterator[tuple[dict, int | None, str]]:
    """(row, word index or None, label) of every label the rows hold."""
    items = layout(task).labels
    if items is None:
        raise TokkitError(f"task {task!r} has no labels (classify and tag have)")
    return items(rows)
