"""The Tokenizer API: lookups, special tokens, threads, fork, pickling, bad and pathological input."""
import multiprocessing
import os
import pickle
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from helpers.oracles import sample_lines

import tokkit
from tokkit.errors import TokkitError
from tokkit.tokenizer import Tokenizer

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@pytest.fixture(params=["wordpiece", "bpe", "bytelevel"])
def tok(request, oracle_paths):
    return tokkit.load(oracle_paths[request.param])


def test_lookups(tok):
    assert tok.vocab_size == len(tok.get_vocab())
    assert tok.special_tokens == SPECIALS
    for token in SPECIALS:
        assert tok.id_to_token(tok.token_to_id(token)) == token
    assert tok.token_to_id("no such token \u2603") is None
    assert tok.id_to_token(tok.vocab_size) is None and tok.id_to_token(-1) is None


def test_special_tokens_in_text(tok):
    sep, mask = tok.token_to_id("[SEP]"), tok.token_to_id("[MASK]")
    ids = tok.encode("first[SEP]second [MASK]")
    assert ids.count(sep) == 1 and ids.count(mask) == 1
    enc = tok.encode_with_offsets("first[SEP]second")
    i = enc.ids.index(sep)
    assert enc.offsets[i] == (5, 10) and enc.tokens[i] == "[SEP]"
    split = Tokenizer(tok.spec, split_special_tokens=True)
    assert sep not in split.encode("first[SEP]second")
    assert split.encode("first second") == tok.encode("first second")


def test_split_special_tokens_matches_tokenizers(oracle_paths):
    tokenizers = pytest.importorskip("tokenizers")
    for kind in ("wordpiece", "bytelevel"):
        ref = tokenizers.Tokenizer.from_file(str(oracle_paths[kind] / "tokenizer.json"))
        ref.encode_special_tokens = True
        ours = tokkit.load(oracle_paths[kind], split_special_tokens=True)
        for text in ["a [SEP] b [CLS][MASK]", "[PAD]x"]:
            assert ours.encode(text) == ref.encode(text, add_special_tokens=False).ids


def test_encode_batch_threads_equal_sequential(tok):
    lines = sample_lines(10)
    expected = [tok.encode(t) for t in lines]
    assert tok.encode_batch(lines, num_threads=1) == expected
    assert tok.encode_batch(lines, num_threads=3) == expected
    assert tok.encode_batch([]) == []
    # one Tokenizer shared by many Python threads at once
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(tok.encode_batch, [lines] * 4))
    assert all(r == expected for r in results)


def test_bad_text_types(tok):
    with pytest.raises(TypeError, match="texts\\[1\\] must be str, not bytes"):
        tok.encode_batch(["ok", b"bytes"])
    with pytest.raises(TypeError, match="not int"):
        tok.encode(5)
    with pytest.raises(TypeError, match="single str"):
        tok.encode_batch("abc")
    with pytest.raises(TokkitError, match="num_threads"):
        tok.encode_batch(["a"], num_threads=0)


def test_lone_surrogates_do_not_crash(tok):
    """Documented: a lone surrogate is treated as an ordinary character (byte-level: its 3-byte
    'surrogatepass' form); tokenizers itself cannot receive one from Python."""
    for text in ["a\ud800b", "\udfff", "x \ud83d"]:
        ids = tok.encode(text)
        assert all(0 <= i < tok.vocab_size for i in ids)


def test_pickle_is_plain_data(tok):
    data = pickle.dumps(tok)
    assert b"tokenizer.json" not in data
    again = pickle.loads(data)
    assert again == tok
    assert again.encode_batch(sample_lines(3)) == tok.encode_batch(sample_lines(3))


def _encode_in_child(args):
    tok, lines = args
    return tok.encode_batch(lines, num_threads=2)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_after_fork_and_in_processes(tok):
    lines = sample_lines(5)
    expected = tok.encode_batch(lines)  # builds the kernel (and its tables) before forking
    with multiprocessing.get_context("fork").Pool(2) as pool:
        assert pool.map(_encode_in_child, [(tok, lines)] * 2) == [expected, expected]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.map(_encode_in_child, [(tok, lines)]) == [expected]


@pytest.mark.parametrize("text", ["a" * 1_000_000, "^" * 1_000_000, ("word" * 2_500_000)])
def test_pathological_text_runs_in_linear_time(tok, text):
    small = text[: len(text) // 10]
    t0 = time.perf_counter()
    tok.encode(small)
    t1 = time.perf_counter()
    ids = tok.encode(text)
    t2 = time.perf_counter()
    assert ids
    # 10x the input may cost ~10x the time; allow generous noise on a shared machine
    assert t2 - t1 < max(2.0, 40 * (t1 - t0))


def test_decode_rules_match_tokenizers_decoders():
    decoders = pytest.importorskip("tokenizers.decoders")
    vocab = SPECIALS + ["don", "'", "t", "n't", "'s", "'m", "go", "##es", ".", "?", "!", ",", "do", "not",
                        "a</w>", "b", "c</w>", "Ġh", "Ã", "©"]
    lists = [[5, 6, 7, 15], [5, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18], [2, 11, 12, 3], [12, 11, 6, 6, 13]]
    wp = Tokenizer.from_trained(kind="wordpiece", vocab=vocab, merges=None, special_tokens=SPECIALS)
    for ids in lists:
        assert wp.decode(ids) == decoders.WordPiece().decode([vocab[i] for i in ids])
    cb = Tokenizer.from_trained(kind="bpe", vocab=vocab, merges=[], special_tokens=SPECIALS)
    for ids in ([19, 20, 21], [20, 21, 19], [2, 19, 3]):
        assert cb.decode(ids) == decoders.BPEDecoder(suffix="</w>").decode([vocab[i] for i in ids])
    wp_ids = wp.encode("don't go")
    assert wp.decode([2] + wp_ids + [3], skip_special_tokens=True) == wp.decode(wp_ids)
    with pytest.raises(TokkitError, match="outside the vocabulary"):
        wp.decode([999])
