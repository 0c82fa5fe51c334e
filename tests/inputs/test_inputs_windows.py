"""Overflow windows for pairs (question answering's contexts) equal to transformers' fast tokenizer."""
import random

import pytest
from helpers.oracles import sample_lines

import tokkit

tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module", params=["wordpiece", "bytelevel"])
def pair(request, oracle_paths):
    path = oracle_paths[request.param] / "tokenizer.json"
    hf = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer.from_file(str(path)),
                                              pad_token="[PAD]")
    return tokkit.load(path), hf


@pytest.fixture(scope="module")
def lines():
    return [line for line in sample_lines(20) if line.strip()]


def hf_rows(enc):
    rows = []
    for i in range(len(enc["input_ids"])):
        rows.append({"input_ids": enc["input_ids"][i], "token_type_ids": enc["token_type_ids"][i],
                     "attention_mask": enc["attention_mask"][i], "special_tokens_mask": enc["special_tokens_mask"][i],
                     "word_ids": [-1 if w is None else w for w in enc.word_ids(i)],
                     "sequence_ids": [-1 if s is None else s for s in enc.sequence_ids(i)],
                     "offsets": [list(o) for o in enc["offset_mapping"][i]]})
    return rows


@pytest.mark.parametrize("strategy", ["only_second", "only_first"])
def test_pair_windows_equal_transformers(pair, lines, strategy):
    tok, hf = pair
    rng = random.Random(strategy)
    checked = 0
    for _ in range(30):
        n = rng.randint(1, 6)
        short = [rng.choice(lines)[:rng.randint(0, 60)] for _ in range(n)]
        long = [" ".join(rng.choice(lines) for _ in range(rng.randint(1, 4))) for _ in range(n)]
        a, b = (short, long) if strategy == "only_second" else (long, short)
        max_length = rng.randint(40, 200)
        stride = rng.randint(0, 24)
        try:
            enc = hf(a, b, truncation=strategy, max_length=max_length, stride=stride, return_overflowing_tokens=True,
                     return_offsets_mapping=True, return_special_tokens_mask=True, return_token_type_ids=True,
                     padding="max_length")
        except BaseException:  # the kept side leaves no room, or less than the stride (tokenizers panics)
            with pytest.raises(ValueError, match=r"text_pairs\[\d+\]|texts\[\d+\]"):
                tokkit.encode(tok, a, b, truncation=strategy, max_length=max_length, stride=stride,
                              return_overflowing=True)
            continue
        out = tokkit.encode(tok, a, b, truncation=strategy, max_length=max_length, stride=stride,
                            return_overflowing=True, return_offsets=True, padding="max_length")
        assert out["overflow_to_sample_mapping"].tolist() == enc["overflow_to_sample_mapping"]
        expected = hf_rows(enc)
        assert out["input_ids"].shape == (len(expected), max_length)
        for i, row in enumerate(expected):
            for key, value in row.items():
                assert out[key][i].tolist() == value, (i, key)
        checked += len(expected) > n  # a batch where some example needed several windows
    assert checked >= 10


def test_question_whole_in_every_window(pair):
    tok, _ = pair
    question = "who wrote it"
    context = " ".join(f"w{i}" for i in range(200))
    out = tokkit.encode(tok, [question, "short"], [context, "tiny"], truncation="only_second", max_length=40,
                        stride=10, return_overflowing=True, return_offsets=True)
    mapping = out["overflow_to_sample_mapping"].tolist()
    assert mapping[-1] == 1 and mapping.count(0) > 3
    q_ids = tok.encode(question)
    windows = [i for i, m in enumerate(mapping) if m == 0]
    contexts = []
    for i in windows:
        seq = out["sequence_ids"][i]
        assert out["input_ids"][i][seq == 0].tolist() == q_ids
        contexts.append(out["input_ids"][i][seq == 1].tolist())
    for prev, nxt in zip(contexts, contexts[1:]):  # each window starts `stride` tokens into the one before
        assert prev[-10:] == nxt[:10]
    whole = tok.encode(context)
    assert contexts[0] == whole[:len(contexts[0])] and contexts[-1] == whole[-len(contexts[-1]):]


def test_pair_window_refusals(pair):
    tok, _ = pair
    with pytest.raises(ValueError, match="truncation='only_second'"):
        tokkit.encode(tok, ["a"], ["b"], return_overflowing=True)
    too_close = r"stride=8 must be smaller than the \d tokens text_pairs\[1\] has in each window beside texts\[1\]"
    with pytest.raises(ValueError, match=too_close):
        tokkit.encode(tok, ["a", "a " * 10], ["b", "b " * 30], max_length=20, stride=8, truncation="only_second",
                      return_overflowing=True)
    # a pair that fits needs no window, whatever the stride
    out = tokkit.encode(tok, ["a " * 10], ["b"], max_length=20, stride=8, truncation="only_second",
                        return_overflowing=True)
    assert out["overflow_to_sample_mapping"].tolist() == [0]
