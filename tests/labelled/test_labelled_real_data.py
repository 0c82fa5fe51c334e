"""The shared labelled tasks (../shared/tasks): the first 200 rows of each file read, checked and
turned into features; the most-frequent-tag floor on brown-pos."""
import json
from itertools import islice

import numpy as np
import pytest
from helpers.paths import TASKS, needs_tasks

import tokkit
from tokkit.labelled import (
    check_labels,
    classification_features,
    label_list,
    most_frequent_tag_baseline,
    read_examples,
    tagging_features,
    word_predictions,
)

pytestmark = needs_tasks
SPLITS = ("train", "dev", "test")


def first_rows(tmp_path, folder, split, n=200):
    """The first n lines of a task file, copied into tmp_path (the shared files are large)."""
    path = tmp_path / f"{folder}-{split}.jsonl"
    with open(TASKS / folder / f"{split}.jsonl", encoding="utf-8") as f:
        path.write_text("".join(islice(f, n)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def wordpiece():
    with open(TASKS / "rt-polarity" / "train.jsonl", encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in islice(f, 3000)]
    return tokkit.train(texts=texts, algo="wordpiece", vocab_size=2000)


def test_rt_polarity(tmp_path, wordpiece):
    rows = {s: read_examples(first_rows(tmp_path, "rt-polarity", s), "classify") for s in SPLITS}
    assert all(len(r) == 200 for r in rows.values())
    labels = label_list(rows["train"], "classify")
    assert labels == ["fresh", "rotten"]
    label2id = {label: i for i, label in enumerate(labels)}
    for split in ("dev", "test"):
        check_labels(rows[split], "classify", label2id, split)
    out = classification_features(wordpiece, rows["train"], label2id, max_length=64)
    assert out["input_ids"].shape[0] == 200 and out["input_ids"].shape[1] <= 64
    assert set(np.unique(out["labels"])) == {0, 1}
    assert (out["input_ids"][:, 0] == wordpiece.token_to_id("[CLS]")).all()


def test_brown_pos(tmp_path, wordpiece):
    rows = {s: read_examples(first_rows(tmp_path, "brown-pos", s), "tag") for s in SPLITS}
    assert all(len(r["tokens"]) == len(r["tags"]) for split in rows.values() for r in split)
    labels = label_list(rows["train"], "tag")
    assert {"at", "nn", "vbd", "."} <= set(labels) and labels == sorted(labels)
    label2id = {t: i for i, t in enumerate(labels)}
    out = tagging_features(wordpiece, rows["train"], label2id, max_length=128)
    lengths = [len(r["tokens"]) for r in rows["train"]]
    assert (out["n_words"] <= lengths).all() and (out["n_words"] == lengths).mean() > 0.9
    first = out["labels"] != -100
    assert first.sum() == out["n_words"].sum()
    words = word_predictions(out["word_ids"], out["labels"], lengths=lengths)
    for row, predicted, kept in zip(rows["train"], words, out["n_words"]):
        assert predicted[:kept] == [label2id[t] for t in row["tags"][:kept]]


def test_brown_pos_floor(tmp_path):
    train = read_examples(first_rows(tmp_path, "brown-pos", "train", 5000), "tag")
    test = read_examples(first_rows(tmp_path, "brown-pos", "test"), "tag")
    report = most_frequent_tag_baseline(train, test)
    assert 0.75 < report["token_accuracy"] < 0.95 and report["unpredicted_words"] == 0
