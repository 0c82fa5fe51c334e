"""The layouts of labelled rows: each knows its fields, its labels and what the tokenizer reads of it."""
import pytest

from tokkit.errors import TokkitError
from tokkit.labelled import LAYOUTS, TASKS, Fields, layout


def test_the_layouts_are_the_tasks_files_hold():
    assert list(LAYOUTS) == list(TASKS) == ["classify", "tag", "qa"]
    with pytest.raises(TokkitError, match=r"unknown task 'regress' \(one of classify, tag, qa\)"):
        layout("regress")


def test_each_layout_finds_its_own_labels():
    rows = [{"label": "pos", "tokens": ["a", "b"], "tags": ["N", "V"]}]
    assert [label for _, _, label in layout("classify").labels(rows)] == ["pos"]
    assert [(word, label) for _, word, label in layout("tag").labels(rows)] == [(0, "N"), (1, "V")]
    assert layout("qa").labels is None


def test_what_the_tokenizer_reads_of_each_layout():
    rows = [{"text": "a b", "text_pair": "c", "tokens": ["a", "b"]}]
    assert layout("classify").texts(rows) == {"texts": ["a b"], "text_pairs": ["c"]}
    assert layout("tag").texts(rows) == {"texts": [["a", "b"]], "is_split_into_words": True}
    with pytest.raises(TokkitError, match="this row has no text_pair while others have one"):
        layout("classify").texts([{"text": "a", "text_pair": "b"}, {"text": "c", "text_pair": None, "line": 3}])


def test_only_question_answering_is_held_in_squads_nested_files():
    assert [name for name, rows in LAYOUTS.items() if rows.nested_squad] == ["qa"]
    row = layout("qa").make({"question": "q", "context": "the park"}, "f: line 1", Fields(), False, False, 7)
    assert row["id"] == "7" and row["answers"] == {"text": [], "answer_start": []}
