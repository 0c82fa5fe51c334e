"""Labelled files -> rows: JSON lines, CSV and TSV (with a header row), and SQuAD's nested JSON.

The format comes from the suffix: `.jsonl` (JSON lines), `.json` (JSON lines, a JSON array of
objects, or SQuAD's `{"data": [{"paragraphs": [...]}]}`), `.csv`, `.tsv`. Each record is checked and turned into
the row of its task by tokkit.labelled.rows; every problem is one TokkitError naming the file, the
line (or the place in a nested file) and the field.

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     path = os.path.join(d, "dev.tsv")
...     _ = open(path, "w").write("sentence\\tlabel\\nA fine film.\\t1\\n")
...     read_examples(path, "classify", fields=Fields(text="sentence"))
[{'text': 'A fine film.', 'text_pair': None, 'label': '1', 'line': 2}]
"""
from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Iterator

import numpy as np

from tokkit._files import parse_json, read_text
from tokkit.errors import TokkitError
from tokkit.labelled.layouts import LAYOUTS, layout
from tokkit.labelled.rows import Fields, text_row

TASKS = tuple(LAYOUTS)  # the layouts' names: the tasks of their files
SUFFIXES = {".jsonl": "json", ".json": "json", ".csv": "csv", ".tsv": "tsv"}

__all__ = ["Fields", "read_examples", "read_texts", "sample_rows", "is_labelled_file", "TASKS"]

# The seed of every --train-limit sample: fixed, not --seed, so that the arms and seeds of a
# comparison train on the same rows and differ only in their model and its randomness.
SAMPLE_SEED = 20231


def read_examples(path: str | os.PathLike, task: str, *, fields: Fields = Fields(),
                  labelled: bool = True) -> list[dict]:
    """The rows of a labelled file for `task` ("classify", "tag" or "qa").

    Rows: classify `{"text", "text_pair" (or None), "label"}`; tag `{"tokens", "tags"}`; qa
    `{"id", "question", "context", "answers": {"text": [...], "answer_start": [...]}}`; each also
    has `"line"`, the line its record starts on (None in SQuAD's nested format). Labels are str
    (a JSON number or bool as its JSON text: 1 -> "1"). `labelled=False` (files to predict on)
    makes labels and answers optional: None, or no answers.
    """
    rows_of = layout(task)
    path = Path(path)
    kind = _kind(path)
    rows = [{**rows_of.make(record, f"{path}: {where}", fields, labelled, kind != "json", i), "line": line}
            for i, (where, line, record) in enumerate(_records(path, kind, rows_of, fields))]
    if not rows:
        raise TokkitError(f"{path}: empty file (no rows)")
    return rows


def read_texts(path: str | os.PathLike, *, fields: Fields = Fields()) -> list[dict]:
    """The texts of a labelled file, `{"text", "text_pair" (or None)}` per row, its labels never read.

    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "train.jsonl")
    ...     _ = open(path, "w").write('{"text": "A fine film.", "label": [1]}\\n')
    ...     read_texts(path)
    [{'text': 'A fine film.', 'text_pair': None}]
    """
    path = Path(path)
    rows = [text_row(record, f"{path}: {where}", fields)
            for where, _line, record in _records(path, _kind(path), layout("classify"), fields)]
    if not rows:
        raise TokkitError(f"{path}: empty file (no rows)")
    return rows


def sample_rows(rows: list[dict], limit: int | None, path: str | os.PathLike = "") -> list[dict]:
    """`limit` rows of `rows`, in file order: the first `limit` of one fixed shuffle, so a larger
    sample holds every smaller one; all rows when `limit` is None.

    >>> [r["n"] for r in sample_rows([{"n": i} for i in range(10)], 3)]
    [2, 6, 9]
    """
    if limit is None:
        return rows
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise TokkitError(f"--train-limit must be a whole number >= 1, got {limit!r}")
    if limit > len(rows):
        raise TokkitError(f"{path}: --train-limit {limit} exceeds the file's {len(rows)} rows")
    chosen = np.random.default_rng(SAMPLE_SEED).permutation(len(rows))[:limit]
    return [rows[i] for i in sorted(chosen.tolist())]


def is_labelled_file(path: str | os.PathLike) -> bool:
    """Whether the suffix names a labelled format (.jsonl, .json, .csv, .tsv)."""
    return Path(path).suffix.lower() in SUFFIXES


def _kind(path: Path) -> str:
    """"json", "csv" or "tsv", from the suffix."""
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise TokkitError(f"{path}: cannot tell the format from the suffix {path.suffix!r} "
                          f"(one of {', '.join(SUFFIXES)})")
    return kind


def _records(path: Path, kind: str, rows_of, fields: Fields) -> Iterator[tuple[str, int | None, dict]]:
    """(where, line, record) of every record of the file, whatever its format."""
    text = read_text(path).removeprefix("\ufeff")  # a byte-order mark, as spreadsheet programs write
    if path.suffix.lower() == ".json":
        return _json_records(path, text, rows_of, fields)
    if kind == "json":
        return _line_records(path, text)
    return _table_records(path, text, kind == "tsv")


def _json_records(path: Path, text: str, rows_of, fields: Fields) -> Iterator[tuple[str, int | None, dict]]:
    """(where, line, record) of a .json file: JSON lines, a JSON array of objects, or SQuAD's nested JSON."""
    whole = _whole_json(text)
    if isinstance(whole, dict) and isinstance(whole.get("data"), list):
        if not rows_of.nested_squad:
            raise TokkitError(f"{path}: SQuAD's nested format holds question answering, not task {rows_of.name!r}")
        return _squad_records(path, whole["data"], fields)
    if isinstance(whole, list):
        return _array_records(path, whole)
    return _line_records(path, text)


def _whole_json(text: str):
    """The file parsed as one JSON value, or None when it is not one (JSON lines are not)."""
    stripped = text.lstrip()
    if not stripped.startswith(("[", "{")):
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):  # JSON lines, or a number past Python's digit limit: read line by line
        return None


def _line_records(path: Path, text: str) -> Iterator[tuple[str, int, dict]]:
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        record = parse_json(line, f"{path}: line {n}", one_line=True)
        if not isinstance(record, dict):
            raise TokkitError(f"{path}: line {n}: expected a JSON object, got {type(record).__name__}")
        yield f"line {n}", n, record


def _array_records(path: Path, items: list) -> Iterator[tuple[str, None, dict]]:
    for i, record in enumerate(items):
        if not isinstance(record, dict):
            raise TokkitError(f"{path}: item {i}: expected a JSON object, got {type(record).__name__}")
        yield f"item {i}", None, record


def _squad_records(path: Path, data: list, fields: Fields) -> Iterator[tuple[str, None, dict]]:
    """SQuAD's data[].paragraphs[].qas[] flattened: one record per question, with its context, keyed
    by `fields` (the nested file spells them as SQuAD does)."""
    names = (("id", fields.id), ("question", fields.question), ("answers", fields.answers))
    for i, article in enumerate(data):
        for j, paragraph in enumerate(_squad_list(path, article, "paragraphs", f"data[{i}]")):
            where = f"data[{i}].paragraphs[{j}]"
            qas = _squad_list(path, paragraph, "qas", where)
            for k, qa in enumerate(qas):
                if not isinstance(qa, dict):
                    raise TokkitError(f"{path}: {where}.qas[{k}]: expected a JSON object")
                record = {new: qa[old] for old, new in names if old in qa}
                if "context" in paragraph:
                    record[fields.context] = paragraph["context"]
                yield f"{where}.qas[{k}]", None, record


def _squad_list(path: Path, parent, key: str, where: str) -> list:
    value = parent.get(key) if isinstance(parent, dict) else None
    if not isinstance(value, list):
        raise TokkitError(f"{path}: {where}: field {key!r}: expected a list")
    return value


# The longest CSV/TSV field read: csv's default of 131,072 characters refuses long contexts and
# reviews of valid files. A field cannot be longer than its file, which is read whole anyway.
MAX_FIELD_CHARS = 1 << 30


def _table_records(path: Path, text: str, tsv: bool) -> Iterator[tuple[str, int, dict]]:
    """CSV (quoted fields may span lines) or TSV (one record a line, no quoting) with a header row."""
    if csv.field_size_limit() < MAX_FIELD_CHARS:  # process-wide: only ever raised, never lowered
        csv.field_size_limit(MAX_FIELD_CHARS)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t" if tsv else ",",
                        quoting=csv.QUOTE_NONE if tsv else csv.QUOTE_MINIMAL, strict=True)
    header, start = None, 1
    try:
        for record in reader:
            line, start = start, reader.line_num + 1
            if not record or record == [""]:
                continue
            if header is None:
                header = _header(path, record, line)
                continue
            if len(record) != len(header):
                raise TokkitError(f"{path}: line {line}: {len(record)} columns, but the header has {len(header)}")
            yield f"line {line}", line, dict(zip(header, record))
    except csv.Error as exc:
        raise TokkitError(f"{path}: line {reader.line_num}: invalid {'TSV' if tsv else 'CSV'} ({exc})") from None


def _header(path: Path, names: list[str], line: int) -> list[str]:
    names = [name.strip() for name in names]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise TokkitError(f"{path}: line {line}: the header names column {repeated[0]!r} twice")
    return names
