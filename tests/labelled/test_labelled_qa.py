"""QA windows and spans equal to transformers' run_qa example (prepare_train_features,
prepare_validation_features, postprocess_qa_predictions), re-implemented here on a
PreTrainedTokenizerFast built from the same tokenizer.json."""
import collections
import random

import numpy as np
import pytest
from helpers.oracles import sample_lines

import tokkit
from tokkit.errors import TokkitError
from tokkit.labelled import qa_features, qa_predictions

tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

MAX_LENGTH, STRIDE = 96, 24


# ---------------------------------------------------------------------------- run_qa, as the example writes it
def run_qa_train_features(hf, rows, max_length, stride, fixed=True):
    """prepare_train_features; `fixed` stops the start search at the context's last token (the
    example's loop runs on over [SEP], whose offsets are (0, 0), when the answer starts in the
    window's last context token, and returns the [SEP] position)."""
    enc = hf([r["question"].lstrip() for r in rows], [r["context"] for r in rows], truncation="only_second",
             max_length=max_length, stride=stride, return_overflowing_tokens=True, return_offsets_mapping=True,
             return_token_type_ids=True)
    starts, ends = [], []
    for i, offsets in enumerate(enc["offset_mapping"]):
        input_ids = enc["input_ids"][i]
        cls_index = input_ids.index(hf.cls_token_id)
        sequence_ids = enc.sequence_ids(i)
        answers = rows[enc["overflow_to_sample_mapping"][i]]["answers"]
        if len(answers["answer_start"]) == 0:
            starts.append(cls_index)
            ends.append(cls_index)
            continue
        start_char = answers["answer_start"][0]
        end_char = start_char + len(answers["text"][0])
        token_start_index = 0
        while sequence_ids[token_start_index] != 1:
            token_start_index += 1
        token_end_index = len(input_ids) - 1
        while sequence_ids[token_end_index] != 1:
            token_end_index -= 1
        if not (offsets[token_start_index][0] <= start_char and offsets[token_end_index][1] >= end_char):
            starts.append(cls_index)
            ends.append(cls_index)
        else:
            stop = token_end_index + 1 if fixed else len(offsets)
            while token_start_index < stop and offsets[token_start_index][0] <= start_char:
                token_start_index += 1
            starts.append(token_start_index - 1)
            while offsets[token_end_index][1] >= end_char:
                token_end_index -= 1
            ends.append(token_end_index + 1)
    return enc, starts, ends


def run_qa_validation_features(hf, rows, max_length, stride):
    enc = hf([r["question"].lstrip() for r in rows], [r["context"] for r in rows], truncation="only_second",
             max_length=max_length, stride=stride, return_overflowing_tokens=True, return_offsets_mapping=True,
             return_token_type_ids=True)
    enc["example_id"] = [rows[i]["id"] for i in enc["overflow_to_sample_mapping"]]
    enc["offset_mapping"] = [[o if enc.sequence_ids(i)[k] == 1 else None for k, o in enumerate(offsets)]
                             for i, offsets in enumerate(enc["offset_mapping"])]
    return enc


def run_qa_postprocess(rows, enc, all_start_logits, all_end_logits, n_best_size=20, max_answer_length=30,
                       version_2_with_negative=False):
    """postprocess_qa_predictions: the best (start, end) character span per example, or None."""
    features_per_example = collections.defaultdict(list)
    id_to_index = {r["id"]: i for i, r in enumerate(rows)}
    for i, example_id in enumerate(enc["example_id"]):
        features_per_example[id_to_index[example_id]].append(i)
    out = {}
    for example_index, row in enumerate(rows):
        min_null_prediction, prelim_predictions = None, []
        for feature_index in features_per_example[example_index]:
            start_logits, end_logits = all_start_logits[feature_index], all_end_logits[feature_index]
            offset_mapping = enc["offset_mapping"][feature_index]
            feature_null_score = start_logits[0] + end_logits[0]
            if min_null_prediction is None or min_null_prediction["score"] > feature_null_score:
                min_null_prediction = {"offsets": (0, 0), "score": feature_null_score}
            start_indexes = np.argsort(start_logits)[-1: -n_best_size - 1: -1].tolist()
            end_indexes = np.argsort(end_logits)[-1: -n_best_size - 1: -1].tolist()
            for start_index in start_indexes:
                for end_index in end_indexes:
                    if (start_index >= len(offset_mapping) or end_index >= len(offset_mapping)
                            or offset_mapping[start_index] is None or offset_mapping[end_index] is None):
                        continue
                    if end_index < start_index or end_index - start_index + 1 > max_answer_length:
                        continue
                    prelim_predictions.append({"offsets": (offset_mapping[start_index][0],
                                                           offset_mapping[end_index][1]),
                                               "score": start_logits[start_index] + end_logits[end_index]})
        null_score = min_null_prediction["score"]
        predictions = sorted(prelim_predictions, key=lambda x: x["score"], reverse=True)[:n_best_size]
        if not predictions:
            out[row["id"]] = None
        elif version_2_with_negative and null_score - predictions[0]["score"] > 0.0:
            out[row["id"]] = None
        else:
            out[row["id"]] = predictions[0]["offsets"]
    return out


# ---------------------------------------------------------------------------- the data
@pytest.fixture(scope="module", params=["wordpiece", "bytelevel"])
def pair(request, oracle_paths):
    path = oracle_paths[request.param] / "tokenizer.json"
    hf = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer.from_file(str(path)),
                                              pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]")
    return tokkit.load(path), hf


@pytest.fixture(scope="module")
def rows():
    """Long contexts (several windows each), questions of a few words, answers of 1-8 words."""
    rng = random.Random(11)
    lines = [line for line in sample_lines(20) if len(line.split()) > 5]
    out = []
    for i in range(40):
        context = " ".join(rng.choice(lines) for _ in range(rng.randint(1, 6)))[:rng.randint(200, 2500)]
        words = [(m.start(), m.end()) for m in __import__("re").finditer(r"\S+", context)]
        a = rng.randrange(len(words))
        b = min(len(words) - 1, a + rng.randint(0, 7))
        start, end = words[a][0], words[b][1]
        answers = {"text": [context[start:end]], "answer_start": [start]}
        if i % 9 == 0:
            answers = {"text": [], "answer_start": []}
        question = " " * (i % 3) + " ".join(rng.choice(lines).split()[:rng.randint(2, 8)]) + "?"
        out.append({"id": f"q{i}", "question": question, "context": context, "answers": answers, "line": i + 1})
    return out


# ---------------------------------------------------------------------------- the tests
def test_train_features_equal_run_qa(pair, rows):
    tok, hf = pair
    f = qa_features(tok, rows, max_length=MAX_LENGTH, stride=STRIDE)
    enc, starts, ends = run_qa_train_features(hf, rows, MAX_LENGTH, STRIDE)
    assert len(enc["input_ids"]) > 2 * len(rows)  # several windows per example
    assert f["example_index"].tolist() == enc["overflow_to_sample_mapping"]
    for i, ids in enumerate(enc["input_ids"]):
        assert f["input_ids"][i, :len(ids)].tolist() == ids
        assert f["token_type_ids"][i, :len(ids)].tolist() == enc["token_type_ids"][i]
        assert f["attention_mask"][i].sum() == len(ids)
    assert f["start_positions"].tolist() == starts and f["end_positions"].tolist() == ends
    assert (f["start_positions"] > 0).sum() > len(rows) // 2  # many windows hold their answer
    assert f["start_positions"].dtype == np.int64 and "offsets" not in f
    offsets = qa_features(tok, rows, max_length=MAX_LENGTH, stride=STRIDE, training=False)["offsets"]
    for i in np.flatnonzero(f["start_positions"]):  # the marked tokens cover the answer, and no more
        answers = rows[f["example_index"][i]]["answers"]
        start, end = answers["answer_start"][0], answers["answer_start"][0] + len(answers["text"][0])
        first, last = offsets[i, f["start_positions"][i]], offsets[i, f["end_positions"][i]]
        assert first[0] <= start < first[1] or first[0] == start and last[1] >= end
        assert last[0] < end <= last[1]


def test_answer_in_a_windows_last_token_is_marked_there(pair):
    """Where run_qa's start search runs past [SEP], the start is the context's last token."""
    tok, hf = pair
    context = " ".join(f"w{i}" for i in range(60)) + " the"  # "the": one token in both vocabularies
    row = {"id": "x", "question": "which", "context": context, "line": 1,
           "answers": {"text": ["the"], "answer_start": [context.rindex("the")]}}
    f = qa_features(tok, [row], max_length=32, stride=8)
    enc, starts, _ = run_qa_train_features(hf, [row], 32, 8, fixed=False)
    last = len(enc["input_ids"]) - 1
    sep = len(enc["input_ids"][last]) - 1
    assert starts[last] == sep  # the example's answer: the [SEP] after the context
    assert f["start_positions"][last] == sep - 1 == f["end_positions"][last]
    assert tok.decode(f["input_ids"][last, sep - 1:sep].tolist()).strip() == "the"


def test_validation_features_equal_run_qa(pair, rows):
    tok, hf = pair
    f = qa_features(tok, rows, max_length=MAX_LENGTH, stride=STRIDE, training=False)
    enc = run_qa_validation_features(hf, rows, MAX_LENGTH, STRIDE)
    assert [rows[i]["id"] for i in f["example_index"]] == enc["example_id"]
    for i, offsets in enumerate(enc["offset_mapping"]):
        want = [[-1, -1] if o is None else list(o) for o in offsets]
        assert f["offsets"][i, :len(want)].tolist() == want and (f["offsets"][i, len(want):] == -1).all()
    assert "start_positions" not in f and f["offsets"].dtype == np.int32


@pytest.mark.parametrize("allow_empty", [False, True])
def test_predicted_spans_equal_run_qa(pair, rows, allow_empty):
    tok, hf = pair
    f = qa_features(tok, rows, max_length=MAX_LENGTH, stride=STRIDE, training=False)
    enc = run_qa_validation_features(hf, rows, MAX_LENGTH, STRIDE)
    rng = np.random.default_rng(5)
    start_logits, end_logits = rng.normal(size=f["offsets"].shape[:2]), rng.normal(size=f["offsets"].shape[:2])
    if allow_empty:  # some rows where the model says "no answer" ([CLS] scores high in all their windows)
        no_answer = f["example_index"] % 3 == 0
        start_logits[no_answer, 0] += 6
        end_logits[no_answer, 0] += 6
    for n_best, longest in [(20, 30), (5, 3)]:
        ours = qa_predictions(rows, f, start_logits, end_logits, n_best=n_best, max_answer_length=longest,
                              allow_empty=allow_empty)
        want = run_qa_postprocess(rows, enc, start_logits, end_logits, n_best, longest, allow_empty)
        assert [p["id"] for p in ours] == [r["id"] for r in rows]
        for p, row in zip(ours, rows):
            span = want[row["id"]]
            if span is None:
                assert (p["answer"], p["start"], p["end"]) == ("", -1, -1)
            else:
                assert (p["start"], p["end"]) == span and p["answer"] == row["context"][span[0]:span[1]]
                assert p["score"] == pytest.approx(max(
                    start_logits[w, s] + end_logits[w, e] for w in np.flatnonzero(f["example_index"] == rows.index(row))
                    for s in range(f["offsets"].shape[1]) for e in range(f["offsets"].shape[1])
                    if f["offsets"][w, s, 0] == span[0] and f["offsets"][w, e, 1] == span[1] and s <= e))
        assert sum(p["answer"] == "" for p in ours) >= (len(rows) // 4 if allow_empty else 0)
        assert sum(p["answer"] != "" for p in ours) >= len(rows) // 4


def test_spans_come_back_from_perfect_logits(pair, rows):
    """Logits that point at each window's answer tokens give back each answerable row's answer."""
    tok, _ = pair
    train = qa_features(tok, rows, max_length=MAX_LENGTH, stride=STRIDE)
    f = qa_features(tok, rows, max_length=MAX_LENGTH, stride=STRIDE, training=False)
    start_logits = np.zeros(f["offsets"].shape[:2])
    end_logits = np.zeros(f["offsets"].shape[:2])
    w = np.arange(start_logits.shape[0])
    start_logits[w, train["start_positions"]] = 10
    end_logits[w, train["end_positions"]] = 10
    for p, row in zip(qa_predictions(rows, f, start_logits, end_logits, max_answer_length=100), rows):
        if row["answers"]["text"]:
            assert row["answers"]["text"][0] in p["answer"] and p["start"] <= row["answers"]["answer_start"][0]


def test_refusals(pair, rows):
    tok, _ = pair
    long_question = {**rows[1], "question": "the " * 74 + "the", "line": 9}  # 75 tokens: 18 left
    with pytest.raises(TokkitError, match=r"line 9: question .q1. has 75 tokens, which leaves 18 of max_length=96"):
        qa_features(tok, [rows[0], long_question], max_length=MAX_LENGTH, stride=STRIDE)
    short_context = {**long_question, "context": "yes"}  # no windows needed: it fits
    assert qa_features(tok, [short_context], max_length=MAX_LENGTH, stride=STRIDE)["input_ids"].shape[0] == 1
    f = qa_features(tok, rows[:2], max_length=MAX_LENGTH, stride=STRIDE, training=False)
    with pytest.raises(TokkitError, match="must have the windows' shape"):
        qa_predictions(rows[:2], f, np.zeros((1, 3)), np.zeros((1, 3)))
    logits = np.zeros(f["offsets"].shape[:2])
    with pytest.raises(TokkitError, match=r"n_best \(0\) and max_answer_length \(30\) must be at least 1"):
        qa_predictions(rows[:2], f, logits, logits, n_best=0)


def test_an_empty_batch_has_no_windows(pair):
    tok, _ = pair
    f = qa_features(tok, [])
    assert f["input_ids"].shape[0] == 0 and f["start_positions"].shape == (0,)
    assert qa_predictions([], qa_features(tok, [], training=False), np.zeros((0, 0)), np.zeros((0, 0))) == []
