"""tokkit.encode: template, truncation, padding and overflow equal to `tokenizers`; refused options."""
import random

import numpy as np
import pytest
from helpers.oracles import sample_lines

import tokkit
from tokkit.errors import TokkitError
from tokkit.tokenizer import Tokenizer

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module", params=["wordpiece", "bytelevel"])
def pair(request, oracle_paths):
    path = oracle_paths[request.param]
    return tokkit.load(path), tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))


@pytest.fixture(scope="module")
def lines():
    return [line for line in sample_lines(20) if line.strip()]


def expected_rows(encs, width, left):
    """tokenizers' encodings as tokkit's rows: word and sequence ids as transformers numbers them."""
    rows = []
    for e in encs:
        words = [-1 if w is None else w for w in e.word_ids]
        sequences = [-1 if s is None else s for s in e.sequence_ids]
        pad = width - len(e.ids)
        fill = lambda values, v: ([v] * pad + values) if left else (values + [v] * pad)  # noqa: E731
        rows.append({"input_ids": fill(e.ids, 0), "token_type_ids": fill(e.type_ids, 0),
                     "attention_mask": fill(e.attention_mask, 0), "special_tokens_mask": fill(e.special_tokens_mask, 1),
                     "word_ids": fill(words, -1), "sequence_ids": fill(sequences, -1),
                     "offsets": fill([list(o) for o in e.offsets], [0, 0])})
    return rows


def check(out, encs, left=False):
    width = out["input_ids"].shape[1]
    for i, row in enumerate(expected_rows(encs, width, left)):
        for key, value in row.items():
            assert out[key][i].tolist() == value, (i, key)


@pytest.mark.parametrize("strategy", ["longest_first", "only_first", "only_second"])
def test_pairs_equal_tokenizers_random_lengths(pair, lines, strategy):
    tok, ref = pair
    rng = random.Random(strategy)
    for _ in range(25):
        max_length = rng.randint(3, 160)  # 3: the template alone, both texts cut to nothing
        n = rng.randint(1, 12)
        a = [rng.choice(lines)[: rng.randint(0, 500)] for _ in range(n)]
        b = [rng.choice(lines)[: rng.randint(0, 500)] for _ in range(n)]
        ref.enable_truncation(max_length, strategy=strategy)
        side = rng.choice(["right", "left"])
        multiple = rng.choice([None, 8])
        ref.enable_padding(pad_id=0, pad_token="[PAD]", direction=side, pad_to_multiple_of=multiple)
        try:
            encs = ref.encode_batch(list(zip(a, b)))
        except Exception:
            with pytest.raises(ValueError, match=r"texts\[\d+\]|text_pairs\[\d+\]"):
                tokkit.encode(tok, a, b, max_length=max_length, truncation=strategy)
            continue
        out = tokkit.encode(tok, a, b, max_length=max_length, truncation=strategy, padding_side=side,
                            pad_to_multiple_of=multiple, return_offsets=True)
        check(out, encs, left=side == "left")


def test_longest_first_arithmetic():
    """The longest_first rule, on exact token counts: shorter keeps min(s, m - s) or floor(m/2)."""
    from tokkit.inputs.encode import truncate_pair

    la, lb = np.array([3, 10, 10, 7, 6, 5]), np.array([10, 3, 10, 7, 9, 2])
    ka, kb = truncate_pair(la, lb, 9, "longest_first")
    assert ka.tolist() == [3, 6, 4, 4, 4, 5] and kb.tolist() == [6, 3, 5, 5, 5, 2]  # A is shorter on ties


def test_single_padding_modes_and_overflow(pair, lines):
    tok, ref = pair
    rng = random.Random(1)
    for _ in range(25):
        max_length = rng.randint(4, 100)
        stride = rng.randint(0, max_length - 3)
        texts = [rng.choice(lines) * rng.randint(1, 3) for _ in range(rng.randint(1, 8))]
        ref.enable_truncation(max_length, stride=stride)
        ref.enable_padding(pad_id=0, pad_token="[PAD]", length=max_length)
        encs = ref.encode_batch(texts)
        flat = [(i, x) for i, e in enumerate(encs) for x in [e] + e.overflowing]
        out = tokkit.encode(tok, texts, max_length=max_length, stride=stride, return_overflowing=True,
                            padding="max_length", return_offsets=True)
        assert out["input_ids"].shape == (len(flat), max_length)
        assert out["overflow_to_sample_mapping"].tolist() == [i for i, _ in flat]
        check(out, [x for _, x in flat])


def test_padding_off_gives_lists(pair):
    tok, _ = pair
    out = tokkit.encode(tok, ["a b c", "a"], padding=None)
    assert isinstance(out["input_ids"], list)
    assert [len(r) for r in out["input_ids"]] == [len(tok.encode("a b c")) + 2, len(tok.encode("a")) + 2]
    assert all(r.dtype == np.int32 for r in out["attention_mask"])


def test_specials_written_in_text_keep_a_word_id(pair):
    tok, _ = pair
    out = tokkit.encode(tok, ["x [MASK] y"])
    ids = out["input_ids"][0].tolist()
    i = ids.index(tok.token_to_id("[MASK]"))
    assert out["special_tokens_mask"][0, i] == 0 and out["word_ids"][0, i] >= 0
    assert out["special_tokens_mask"][0, 0] == 1 and out["word_ids"][0, 0] == -1


def test_refused_options(pair):
    tok, _ = pair
    with pytest.raises(ValueError, match="max_length=2 is below the 3 template tokens"):
        tokkit.encode(tok, ["a"], ["b"], max_length=2)
    with pytest.raises(ValueError, match="max_length=1"):
        tokkit.encode(tok, ["a"], max_length=1)
    with pytest.raises(ValueError, match="return_overflowing needs"):
        tokkit.encode(tok, ["a"], max_length=2, return_overflowing=True)
    with pytest.raises(ValueError, match="pairs"):
        tokkit.encode(tok, ["a"], ["b"], return_overflowing=True)
    with pytest.raises(ValueError, match="stride=8 must be smaller"):
        tokkit.encode(tok, ["a"], max_length=10, stride=8, return_overflowing=True)
    with pytest.raises(ValueError, match="only_second"):
        tokkit.encode(tok, ["a"], truncation="only_second")
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        tokkit.encode(tok, ["a", "a " * 50], ["b", "b " * 50], max_length=20, truncation="only_first")
    with pytest.raises(ValueError, match=r"only_second'.*text_pairs\[1\] \(\d+ tokens\).*first text alone has \d+ of the 17"):
        tokkit.encode(tok, ["a", "a " * 50], ["b", "b " * 50], max_length=20, truncation="only_second")
    assert tokkit.encode(tok, ["a " * 50], ["b " * 50], max_length=60, truncation="only_second",
                         padding=None)["input_ids"][0].size == 60
    with pytest.raises(TypeError, match=r"texts\[1\] must be str, not NoneType"):
        tokkit.encode(tok, ["a", None])
    with pytest.raises(TypeError, match=r"^text_pairs\[0\] must be str, not bytes"):
        tokkit.encode(tok, ["a"], [b"b"])
    with pytest.raises(ValueError, match="text_pairs has 1"):
        tokkit.encode(tok, ["a", "b"], ["c"])
    with pytest.raises(ValueError, match="padding"):
        tokkit.encode(tok, ["a"], padding="sideways")


def test_tokenizer_without_template_is_refused():
    tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[PAD]", "[UNK]", "a"], merges=None,
                                 special_tokens=["[PAD]", "[UNK]"])
    with pytest.raises(TokkitError, match="no \\[CLS\\]/\\[SEP\\] template"):
        tokkit.encode(tok, ["a"])


def test_max_length_equal_to_the_template_keeps_only_specials(pair):
    tok, ref = pair
    ref.enable_truncation(3)
    ref.no_padding()
    encs = ref.encode_batch([("a b c", "d e")])
    out = tokkit.encode(tok, ["a b c"], ["d e"], max_length=3)
    assert out["input_ids"][0].tolist() == encs[0].ids == [tok.token_to_id(t) for t in ("[CLS]", "[SEP]", "[SEP]")]
    ref.enable_truncation(2)
    assert tokkit.encode(tok, ["a b c"], max_length=2)["input_ids"][0].tolist() == ref.encode("a b c").ids
