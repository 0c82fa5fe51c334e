"""Label sets (sorted, numbers by value), the check that dev labels were seen in training, and
classification features."""
import numpy as np
import pytest

import tokkit
from tokkit.errors import TokkitError
from tokkit.labelled import check_labels, classification_features, label_list

tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")


def test_label_list_is_sorted_and_numbers_keep_their_order():
    rows = [{"label": b, "line": i} for i, b in enumerate(["neg", "pos", "neg", None, "mixed"])]
    assert label_list(rows, "classify") == ["mixed", "neg", "pos"]
    assert label_list([{"label": x} for x in ["10", "2", "1", "-1"]], "classify") == ["-1", "1", "2", "10"]
    assert label_list([{"tags": ["nn", "at"]}, {"tags": ["at", "vbd"]}, {"tags": None}], "tag") == ["at", "nn", "vbd"]
    with pytest.raises(TokkitError, match="no labels"):
        label_list([{"label": None}], "classify")
    with pytest.raises(TokkitError, match="task 'qa' has no labels"):
        label_list([], "qa")


def test_unseen_dev_label_names_it_and_its_line():
    label2id = {"fresh": 0, "rotten": 1}
    check_labels([{"label": "fresh", "line": 1}, {"label": None, "line": 2}], "classify", label2id, "dev.jsonl")
    with pytest.raises(TokkitError, match=r"^dev\.jsonl: line 7: label 'stale' is not one of the 2 labels .*"
                                          r"\(fresh, rotten\)$"):
        check_labels([{"label": "fresh", "line": 3}, {"label": "stale", "line": 7}], "classify", label2id, "dev.jsonl")
    with pytest.raises(TokkitError, match=r"dev\.jsonl: line 4: label 'np-tl' \(word 1 'Fulton'\)"):
        check_labels([{"tokens": ["The", "Fulton"], "tags": ["at", "np-tl"], "line": 4}], "tag", {"at": 0},
                     "dev.jsonl")


@pytest.fixture(scope="module")
def wordpiece(oracle_paths):
    path = oracle_paths["wordpiece"] / "tokenizer.json"
    hf = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer.from_file(str(path)),
                                              pad_token="[PAD]")
    return tokkit.load(path), hf


def test_classification_features_equal_transformers(wordpiece):
    tok, hf = wordpiece
    rows = [{"text": "A three-hour cinema master class.", "text_pair": None, "label": "fresh", "line": 1},
            {"text": "It is long " * 80, "text_pair": None, "label": "rotten", "line": 2},
            {"text": "", "text_pair": None, "label": "fresh", "line": 3}]
    out = classification_features(tok, rows, {"fresh": 0, "rotten": 1}, max_length=64)
    enc = hf([r["text"] for r in rows], truncation=True, max_length=64, padding="longest", return_token_type_ids=True)
    assert out["input_ids"].tolist() == enc["input_ids"]
    assert out["attention_mask"].tolist() == enc["attention_mask"]
    assert out["token_type_ids"].tolist() == enc["token_type_ids"]
    assert out["labels"].dtype == np.int64 and out["labels"].tolist() == [0, 1, 0]
    assert set(out) == {"input_ids", "token_type_ids", "attention_mask", "labels"}


def test_classification_pairs_and_refusals(wordpiece):
    tok, hf = wordpiece
    rows = [{"text": "the cat sat", "text_pair": "on the mat", "label": "yes", "line": 1},
            {"text": "a dog", "text_pair": "barked " * 40, "label": "no", "line": 2}]
    out = classification_features(tok, rows, max_length=32)
    enc = hf(["the cat sat", "a dog"], ["on the mat", "barked " * 40], truncation="longest_first", max_length=32,
             padding="longest", return_token_type_ids=True)
    assert out["input_ids"].tolist() == enc["input_ids"] and out["token_type_ids"].tolist() == enc["token_type_ids"]
    assert "labels" not in out
    with pytest.raises(TokkitError, match=r"line 2: this row has no text_pair while others have one"):
        classification_features(tok, [rows[0], {"text": "x", "text_pair": None, "label": "no", "line": 2}])
    with pytest.raises(TokkitError, match=r"line 2: label 'maybe' is not one of the 2 labels"):
        classification_features(tok, [rows[0], {**rows[1], "label": "maybe"}], {"yes": 0, "no": 1})
    with pytest.raises(TokkitError, match=r"line 1: this row has no label"):
        classification_features(tok, [{**rows[0], "label": None}], {"yes": 0, "no": 1})
