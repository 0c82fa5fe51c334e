"""Word labels on sub-tokens equal to transformers' alignment (run_ner's tokenize_and_align_labels on a
fast tokenizer's word_ids), predictions read back per word, and words of raw text."""
import json
import random

import numpy as np
import pytest
from helpers.oracles import sample_lines

import tokkit
from tokkit.errors import TokkitError
from tokkit.labelled import IGNORE_INDEX, tagging_features, text_words, word_predictions

tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

TAGS = ["at", "nn", "vbd", "in", "np-tl", "."]


@pytest.fixture(scope="module", params=["wordpiece", "bytelevel"])
def pair(request, oracle_paths):
    """tokkit and transformers on one tokenizer.json; transformers reads byte-level words with
    add_prefix_space on, as RoBERTa's tokenizer needs for split words (tokkit does so by itself)."""
    path = oracle_paths[request.param] / "tokenizer.json"
    obj = json.loads(path.read_text(encoding="utf-8"))
    if obj["pre_tokenizer"]["type"] == "ByteLevel":
        obj["pre_tokenizer"]["add_prefix_space"] = True
    hf = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer.from_str(json.dumps(obj)),
                                              pad_token="[PAD]")
    return tokkit.load(path), hf


@pytest.fixture(scope="module")
def rows():
    rng = random.Random(3)
    words = [line.split() for line in sample_lines(10) if line.split()][:200]
    return [{"tokens": w, "tags": [rng.choice(TAGS) for _ in w], "line": i} for i, w in enumerate(words)]


def aligned_by_transformers(hf, rows, label2id, max_length, all_subtokens):
    """run_ner's tokenize_and_align_labels, on transformers' word_ids."""
    enc = hf([r["tokens"] for r in rows], truncation=True, max_length=max_length, is_split_into_words=True)
    labels, words = [], []
    for i, row in enumerate(rows):
        previous, row_labels = None, []
        for w in enc.word_ids(i):
            if w is None:
                row_labels.append(IGNORE_INDEX)
            elif w != previous or all_subtokens:
                row_labels.append(label2id[row["tags"][w]])
            else:
                row_labels.append(IGNORE_INDEX)
            previous = w
        labels.append(row_labels)
        words.append([-1 if w is None else w for w in enc.word_ids(i)])
    return enc, labels, words


@pytest.mark.parametrize("all_subtokens", [False, True])
@pytest.mark.parametrize("max_length", [16, 64, 512])
def test_labels_equal_transformers_alignment(pair, rows, max_length, all_subtokens):
    tok, hf = pair
    label2id = {t: i for i, t in enumerate(sorted(TAGS))}
    out = tagging_features(tok, rows, label2id, max_length=max_length, label_all_subtokens=all_subtokens)
    enc, labels, words = aligned_by_transformers(hf, rows, label2id, max_length, all_subtokens)
    for i in range(len(rows)):
        n = len(enc["input_ids"][i])
        assert out["input_ids"][i, :n].tolist() == enc["input_ids"][i]
        assert out["labels"][i, :n].tolist() == labels[i] and (out["labels"][i, n:] == IGNORE_INDEX).all()
        assert out["word_ids"][i, :n].tolist() == words[i] and (out["word_ids"][i, n:] == -1).all()
        kept = {w for w in words[i] if w >= 0}
        assert out["n_words"][i] == len(kept)
    assert out["labels"].dtype == np.int64 and out["n_words"].dtype == np.int64
    if max_length == 16:  # long rows lose words to truncation, and n_words says how many
        assert (out["n_words"] < [len(r["tokens"]) for r in rows]).sum() > 20


def test_word_predictions_read_first_subtokens(pair, rows):
    tok, hf = pair
    out = tagging_features(tok, rows, max_length=24)
    rng = np.random.default_rng(0)
    scores = rng.normal(size=out["input_ids"].shape + (len(TAGS),))
    predicted = scores.argmax(-1)
    got = word_predictions(out["word_ids"], scores, lengths=[len(r["tokens"]) for r in rows])
    enc = hf([r["tokens"] for r in rows], truncation=True, max_length=24, is_split_into_words=True)
    for i, row in enumerate(rows):
        expected = [-1] * len(row["tokens"])
        previous = None
        for position, w in enumerate(enc.word_ids(i)):
            if w is not None and w != previous:
                expected[w] = int(predicted[i, position])
            previous = w
        assert got[i] == expected
    assert word_predictions(out["word_ids"], predicted) == [g[:max(out["word_ids"][i]) + 1] for i, g in enumerate(got)]
    with pytest.raises(TokkitError, match="token_predictions has shape"):
        word_predictions(out["word_ids"], predicted[:, :3])


def test_rows_without_tags_and_unknown_tags(pair):
    tok, _ = pair
    out = tagging_features(tok, [{"tokens": ["a", "b"], "tags": None}])
    assert "labels" not in out and out["n_words"].tolist() == [2]
    with pytest.raises(TokkitError, match="line 5: this row has no tags"):
        tagging_features(tok, [{"tokens": ["a"], "tags": None, "line": 5}], {"x": 0})
    with pytest.raises(TokkitError, match=r"line 2: label 'zz' \(word 1 'b'\)"):
        tagging_features(tok, [{"tokens": ["a", "b"], "tags": ["x", "zz"], "line": 2}], {"x": 0})


def test_text_words_by_whitespace_and_by_pre_tokenizer(oracle_paths):
    text = "  The Fulton County jury said, \"no evidence\" of Atlanta's  vote.\t"
    assert text_words(text) == [(w, text.index(w), text.index(w) + len(w)) for w in text.split()]
    assert text_words("") == [] and text_words(" \n ") == []
    path = oracle_paths["wordpiece"] / "tokenizer.json"
    backend = tokenizers.Tokenizer.from_file(str(path))
    pieces = backend.pre_tokenizer.pre_tokenize_str(text)
    assert text_words(text, tokkit.load(path)) == [(text[s:e], s, e) for _, (s, e) in pieces]
    byte_level = tokkit.load(oracle_paths["bytelevel"] / "tokenizer.json")
    words = text_words(text, byte_level)  # GPT-2's pieces carry their leading space; the words do not
    assert [w for w, _, _ in words] == ["The", "Fulton", "County", "jury", "said", ",", "\"", "no", "evidence", "\"",
                                        "of", "Atlanta", "'s", "vote", "."]
    assert all(text[s:e] == w for w, s, e in words)


def test_raw_text_tags_every_word(pair):
    tok, _ = pair
    text = "The jury said it did not see any evidence."
    words = text_words(text, tok)
    out = tagging_features(tok, [{"tokens": [w for w, _, _ in words], "tags": None}])
    assert out["n_words"].tolist() == [len(words)]
    assert len(word_predictions(out["word_ids"], np.zeros_like(out["word_ids"]))[0]) == len(words)
