"""Scores on hand-checked examples and against a plain recount; SQuAD's normalisation; the
most-frequent-tag floor."""
import random

import pytest

from tokkit.errors import TokkitError
from tokkit.labelled import (
    classification_report,
    format_report,
    most_frequent_tag_baseline,
    most_frequent_tag_predictions,
    squad_report,
    tagging_report,
)
from tokkit.labelled.metrics import answer_f1, normalize_answer


def test_classification_report_by_hand():
    gold = ["fresh", "fresh", "fresh", "rotten", "rotten"]
    pred = ["fresh", "rotten", "fresh", "rotten", "fresh"]
    r = classification_report(gold, pred, ["fresh", "rotten"])
    assert r["accuracy"] == pytest.approx(3 / 5)
    # fresh: 2 of 3 predicted right (p 2/3), 2 of 3 found (r 2/3); rotten: p 1/2, r 1/2
    assert r["per_label"]["fresh"] == pytest.approx({"precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3, "support": 3})
    assert r["per_label"]["rotten"] == pytest.approx({"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2})
    assert r["macro_f1"] == pytest.approx((2 / 3 + 0.5) / 2)


def test_unseen_and_never_predicted_labels():
    r = classification_report(["a", "a", "b"], ["a", "a", "a"], ["c", "b", "a"])
    assert list(r["per_label"]) == ["b", "a"]  # c is neither gold nor predicted: left out of macro F1
    assert r["per_label"]["b"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1}
    assert r["macro_f1"] == pytest.approx((0 + 0.8) / 2)
    r = classification_report(["a", "b"], ["a", None], ["a", "b"])
    assert r["accuracy"] == 0.5 and r["per_label"]["b"]["recall"] == 0.0
    with pytest.raises(TokkitError, match="2 gold labels but 1 predictions"):
        classification_report(["a", "b"], ["a"], ["a"])
    with pytest.raises(TokkitError, match="nothing to score"):
        classification_report([], [], ["a"])


def recount_f1(gold, pred, label):
    """F1 by its definition, counted pair by pair."""
    tp = sum(1 for g, p in zip(gold, pred) if g == label and p == label)
    fp = sum(1 for g, p in zip(gold, pred) if g != label and p == label)
    fn = sum(1 for g, p in zip(gold, pred) if g == label and p != label)
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def test_f1_equals_a_plain_recount():
    rng = random.Random(0)
    labels = ["x", "y", "z", "w"]
    for _ in range(20):
        n = rng.randint(1, 200)
        gold = [rng.choice(labels[:3]) for _ in range(n)]
        pred = [rng.choice(labels + [None]) for _ in range(n)]
        r = classification_report(gold, pred, labels)
        present = [lab for lab in labels if lab in gold or lab in pred]
        for lab in present:
            assert r["per_label"][lab]["f1"] == pytest.approx(recount_f1(gold, pred, lab))
        assert r["macro_f1"] == pytest.approx(sum(recount_f1(gold, pred, lab) for lab in present) / len(present))
        assert r["accuracy"] == pytest.approx(sum(g == p for g, p in zip(gold, pred)) / n)


def test_tagging_report_counts_missing_words_as_wrong():
    gold = [["at", "nn", "vbd"], ["nn", "."]]
    pred = [["at", "nn"], ["nn", "nn"]]  # the first row lost its last word to truncation
    r = tagging_report(gold, pred, ["at", "nn", "vbd", "."])
    assert r["token_accuracy"] == pytest.approx(3 / 5)
    assert r["words"] == 5 and r["unpredicted_words"] == 1
    assert r["per_label"]["vbd"]["recall"] == 0.0 and r["per_label"]["nn"]["precision"] == pytest.approx(2 / 3)
    with pytest.raises(TokkitError, match="row 0: 3 predictions for 2 words"):
        tagging_report([["a", "b"]], [["a", "b", "c"]], ["a", "b"])


@pytest.mark.parametrize("text, normal", [
    ("The Denver Broncos", "denver broncos"), ("  an apple,  a pear.", "apple pear"), ("theatre", "theatre"),
    ("Super Bowl 50!", "super bowl 50"), ("A", ""), ("O'Neil's", "oneils"),
])
def test_squad_normalisation(text, normal):
    assert normalize_answer(text) == normal


def test_squad_report_takes_the_best_gold_answer():
    rows = [{"id": "1", "answers": {"text": ["Denver Broncos", "The Broncos"], "answer_start": [0, 0]}},
            {"id": "2", "answers": {"text": ["Santa Clara, California"], "answer_start": [0]}},
            {"id": "3", "answers": {"text": [], "answer_start": []}},
            {"id": "4", "answers": {"text": ["x"], "answer_start": [0]}}]
    predictions = [{"id": "1", "answer": "broncos"}, {"id": "2", "answer": "Santa Clara"}, {"id": "3", "answer": ""}]
    r = squad_report(predictions, rows)
    # 1: exact with "The Broncos"; 2: f1 = 2*(2/2)*(2/3)/(1+2/3) = 0.8; 3: no answer, none given; 4: missing
    assert r["exact_match"] == pytest.approx(2 / 4)
    assert r["f1"] == pytest.approx((1 + 0.8 + 1 + 0) / 4)
    assert answer_f1("a b c", "c b a") == 1.0 and answer_f1("", "x") == 0.0 and answer_f1("the", "") == 1.0


def test_format_report_aligns_columns():
    text = format_report({"exact_match": 0.5, "f1": 0.75, "windows": 12})
    assert text.split("\n") == ["exact_match  0.5000", "f1           0.7500", "windows      12"]
    table = format_report(tagging_report([["np-tl", "nn"]], [["np-tl", "vb"]], ["nn", "np-tl", "vb"]))
    lines = table.split("\n")
    assert lines[0] == "token_accuracy     0.5000" and lines[4].split() == ["label", "precision", "recall", "f1",
                                                                          "support"]
    assert len({line.index("precision") for line in lines[4:5]}) == 1
    assert lines[5].startswith("nn     ") and lines[6].split() == ["np-tl", "1.0000", "1.0000", "1.0000", "1"]


def test_most_frequent_tag_baseline():
    train = [{"tokens": ["The", "saw", "saw", "saw", "can"], "tags": ["at", "vbd", "nn", "vbd", "md"]},
             {"tokens": ["the", "Can"], "tags": ["at", "nn"]}]
    test = [{"tokens": ["The", "saw", "CAN", "can", "new"], "tags": ["at", "nn", "nn", "md", "jj"]}]
    # saw: vbd twice; CAN: unknown as written, "can" lowercased has md and nn once each -> md (sorts first);
    # new: unknown -> the most frequent tag overall (at, nn and vbd have 2 each; at sorts first)
    assert most_frequent_tag_predictions(train, test) == [["at", "vbd", "md", "md", "at"]]
    assert most_frequent_tag_baseline(train, test)["token_accuracy"] == pytest.approx(2 / 5)
    with pytest.raises(TokkitError, match="no tags"):
        most_frequent_tag_predictions([{"tokens": ["a"], "tags": None}], test)
