"""One record of a labelled file -> the row of its task, with every field checked.

A record is a dict: a JSON object, or a CSV/TSV line keyed by the header (`from_table`: every
value a str, and a tagging row's tokens and tags space-separated). Problems are TokkitErrors that
start with `where` (the file and line) and name the field.

Each layout of rows (tokkit.labelled.layouts) reads its records with one function here.

>>> tag_row({"tokens": "The jury", "tags": "at nn"}, "f.tsv: line 2", Fields(), True, True, 0)
{'tokens': ['The', 'jury'], 'tags': ['at', 'nn']}
>>> classify_row({"text": "Good.", "label": 1}, "f.jsonl: line 1", Fields(), True, False, 0)["label"]
'1'
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from tokkit._files import parse_json
from tokkit.errors import TokkitError

_MISSING = object()


@dataclass(frozen=True)
class Fields:
    """The names of the fields (JSON keys, CSV/TSV columns) each task reads.

    >>> Fields(text="sentence").text, Fields().label
    ('sentence', 'label')
    """

    text: str = "text"
    text_pair: str = "text_pair"
    label: str = "label"
    tokens: str = "tokens"
    tags: str = "tags"
    question: str = "question"
    context: str = "context"
    answers: str = "answers"
    id: str = "id"


def _field(record: dict, name: str, where: str, required: bool):
    value = record.get(name, _MISSING)
    if value is _MISSING or value is None:
        if required:
            raise TokkitError(f"{where}: field {name!r} is {'missing' if value is _MISSING else 'null'}")
        return None
    return value


def _text(value, name: str, where: str) -> str:
    if not isinstance(value, str):
        raise TokkitError(f"{where}: field {name!r}: expected a string, got {_json_type(value)}")
    return value


def _label(value, name: str, where: str) -> str:
    """A label as str: JSON numbers and bools as their JSON text (1 -> "1", true -> "true")."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return json.dumps(value)
    raise TokkitError(f"{where}: field {name!r}: expected a label (string, number or bool), got {_json_type(value)}")


def _json_type(value) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a bool", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


def text_row(record: dict, where: str, f: Fields) -> dict:
    """`{"text", "text_pair" (or None)}` of one record; no other field is read (pretraining on a task's texts)."""
    text = _text(_field(record, f.text, where, True), f.text, where)
    pair = _field(record, f.text_pair, where, False)
    return {"text": text, "text_pair": None if pair is None else _text(pair, f.text_pair, where)}


def classify_row(record: dict, where: str, f: Fields, labelled: bool, from_table: bool, index: int) -> dict:
    """A text (or pair) and its label."""
    row = text_row(record, where, f)
    label = _field(record, f.label, where, labelled)
    row["label"] = None if label is None else _label(label, f.label, where)
    return row


def tag_row(record: dict, where: str, f: Fields, labelled: bool, from_table: bool, index: int) -> dict:
    """Words and a tag for each."""
    tokens = _words(_field(record, f.tokens, where, True), f.tokens, where, from_table, _text)
    tags = _field(record, f.tags, where, labelled)
    if tags is None:
        return {"tokens": tokens, "tags": None}
    tags = _words(tags, f.tags, where, from_table, _label)
    if len(tags) != len(tokens):
        raise TokkitError(f"{where}: field {f.tags!r}: {len(tags)} tags for {len(tokens)} tokens")
    return {"tokens": tokens, "tags": tags}


def _words(value, name: str, where: str, from_table: bool, check) -> list[str]:
    """A list of words (or tags): a JSON list, or a space-separated CSV/TSV value."""
    if from_table:
        return _text(value, name, where).split()
    if not isinstance(value, list):
        raise TokkitError(f"{where}: field {name!r}: expected a list, got {_json_type(value)}")
    return [check(item, f"{name}[{i}]", where) for i, item in enumerate(value)]


def qa_row(record: dict, where: str, f: Fields, labelled: bool, from_table: bool, index: int) -> dict:
    """A question, its context and the answers found in it; `index` is the id of a record without one."""
    context = _text(_field(record, f.context, where, True), f.context, where)
    question = _text(_field(record, f.question, where, True), f.question, where)
    qid = _field(record, f.id, where, False)
    qid = str(index) if qid is None else _label(qid, f.id, where)
    answers = _field(record, f.answers, where, labelled)
    if answers is None:
        return {"id": qid, "question": question, "context": context, "answers": {"text": [], "answer_start": []}}
    if from_table:
        answers = _json_text(answers, f.answers, where)
    return {"id": qid, "question": question, "context": context,
            "answers": _answers(answers, context, f.answers, where)}


def _json_text(value: str, name: str, where: str):
    return parse_json(value, f"{where}: field {name!r}", one_line=True)


def _answers(value, context: str, name: str, where: str) -> dict:
    """SQuAD's answers, as its datasets write them ({"text": [...], "answer_start": [...]}) or as
    its nested files do ([{"text", "answer_start"}, ...]); each must be found in the context."""
    if isinstance(value, list):
        if not all(isinstance(a, dict) for a in value):
            raise TokkitError(f"{where}: field {name!r}: expected a list of objects with text and answer_start")
        value = {"text": [a.get("text") for a in value], "answer_start": [a.get("answer_start") for a in value]}
    if not isinstance(value, dict) or not isinstance(value.get("text"), list) \
            or not isinstance(value.get("answer_start"), list):
        raise TokkitError(f"{where}: field {name!r}: expected {{\"text\": [...], \"answer_start\": [...]}}")
    texts, starts = value["text"], value["answer_start"]
    if len(texts) != len(starts):
        raise TokkitError(f"{where}: field {name!r}: {len(texts)} texts but {len(starts)} answer_start values")
    for i, (text, start) in enumerate(zip(texts, starts)):
        _text(text, f"{name}.text[{i}]", where)
        # An offset past the context is refused even for an empty answer (which is found anywhere):
        # the offsets become int64 arrays, and 2**63 would overflow them.
        if not isinstance(start, int) or isinstance(start, bool) or not 0 <= start <= len(context):
            shown = f"a number of {start.bit_length()} bits" if isinstance(start, int) and abs(start) > 2**64 \
                else repr(start)
            raise TokkitError(f"{where}: field {name}.answer_start[{i}]: expected a character offset, got {shown} "
                              f"(one in [0, {len(context)}], the context's length)")
        found = context[start:start + len(text)]
        if found != text:
            raise TokkitError(f"{where}: field {name!r}: answer {i} {text!r} is not in the context at "
                              f"answer_start={start} (the context has {found!r} there)")
    return {"text": list(texts), "answer_start": list(starts)}


def text_pairs(rows: list[dict]) -> list[str] | None:
    """The rows' second texts, or None when no row has one; some rows with and some without is an error."""
    has_pair = [r.get("text_pair") is not None for r in rows]
    if not any(has_pair):
        return None
    if not all(has_pair):
        single = rows[has_pair.index(False)]
        raise TokkitError(f"line {single.get('line')}: this row has no text_pair while others have one; "
                          "give every row a text_pair, or none")
    return [r["text_pair"] for r in rows]
