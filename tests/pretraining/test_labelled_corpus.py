"""Labelled files (JSONL, JSON, CSV, TSV) as a pretraining corpus: their texts, one document a row."""
import json

import numpy as np
import pytest
from helpers.pretraining import WORDS, train_tokenizer

from tokkit.errors import TokkitError
from tokkit.labelled import Fields
from tokkit.pretraining import PretrainingDataset, iter_documents
from tokkit.pretraining.corpus_index import DocumentIndex, DocumentReader


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def reviews(n, seed=0):
    """n labelled rows of film-review-like text."""
    rng = np.random.default_rng(seed)
    return [{"text": " ".join(rng.choice(WORDS, size=12)).capitalize() + f" {i}.", "label": int(i % 2)}
            for i in range(n)]


@pytest.fixture(scope="module")
def tok():
    return train_tokenizer([" ".join(WORDS)] * 20 + [str(i) for i in range(100)])


def test_each_row_is_one_document_of_its_text_and_pair_and_labels_are_never_read(tmp_path):
    rows = [{"text": "First review.\nIts second line.", "label": [["not", "a", "label"]]},
            {"text": "", "label": 1},  # no text: no document
            {"text": "A premise.", "text_pair": "A hypothesis.", "label": "entailment"},
            {"text": "Last one."}]
    path = write_jsonl(tmp_path / "train.jsonl", rows)
    assert list(iter_documents(path)) == [["First review.", "Its second line."], ["A premise.", "A hypothesis."],
                                          ["Last one."]]


def test_every_labelled_format_gives_the_same_documents(tmp_path):
    (tmp_path / "a.tsv").write_text("sentence\tlabel\nGood film.\t1\nBad film.\t0\n", encoding="utf-8")
    (tmp_path / "b.csv").write_text('sentence,label\n"Good film.",1\n"Bad film.",0\n', encoding="utf-8")
    (tmp_path / "c.json").write_text(json.dumps([{"sentence": "Good film."}, {"sentence": "Bad film."}]),
                                     encoding="utf-8")
    for name in ("a.tsv", "b.csv", "c.json"):
        assert list(iter_documents(tmp_path / name, Fields(text="sentence"))) == [["Good film."], ["Bad film."]]


def test_text_and_labelled_files_mix_in_one_corpus(tmp_path, tok):
    (tmp_path / "general.txt").write_text("Title\n\nA river ran.\nBy a stone.\n\nA forest of paper.\nMore.\n",
                                          encoding="utf-8")
    path = write_jsonl(tmp_path / "task.jsonl", reviews(6))
    files = [tmp_path / "general.txt", path]
    docs = list(iter_documents(files))
    assert docs[:2] == [["Title", "A river ran.", "By a stone."], ["A forest of paper.", "More."]]
    assert docs[2:] == [[r["text"]] for r in reviews(6)]
    index = DocumentIndex.build(files)
    assert len(index) == 8 and index.file.tolist() == [0, 0] + [1] * 6
    with DocumentReader(index) as reader:  # a shuffled epoch reads rows by number
        assert [reader.read(d) for d in (7, 2, 0)] == [docs[7], docs[2], docs[0]]
    ds = PretrainingDataset(tok, files, kind="full", max_length=16, seed=0)
    assert {int(e["document"]) for e in ds} == set(range(8))


def test_the_text_field_is_named_and_a_missing_one_or_no_text_is_refused(tmp_path):
    path = write_jsonl(tmp_path / "train.jsonl", [{"sentence": "Fine.", "label": 1}])
    assert list(iter_documents(path, Fields(text="sentence"))) == [["Fine."]]
    with pytest.raises(TokkitError, match=r"train.jsonl: line 1: field 'text' is missing"):
        DocumentIndex.build([path])
    empty = write_jsonl(tmp_path / "empty.jsonl", [{"text": "  ", "label": 1}, {"text": "", "label": 0}])
    with pytest.raises(TokkitError, match="no text to pretrain on"):
        DocumentIndex.build([empty])
    with pytest.raises(TokkitError, match="field 'text': expected a string"):
        list(iter_documents(write_jsonl(tmp_path / "bad.jsonl", [{"text": 3}])))
