"""Numpy outputs: encode_to_numpy and encode_batch_flat give exactly the ids of the list APIs."""
import threading

import numpy as np
import pytest
from helpers.oracles import EDGE_CASES, sample_lines
from helpers.paths import SHARED, needs_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokkit
from tokkit.tokenizer.tokenizer import check_texts, join_flat

KINDS = ["wordpiece", "bpe", "bytelevel"]
# every code point, lone surrogates included (tokkit takes them; see Tokenizer's docstring)
ANY_CHAR = st.integers(0, 0x10FFFF).map(chr)
MIXED_CHAR = st.sampled_from(list("ab cé\u0301中😀 \t\n.,!'[]SEP\u200d\u0000\ufffd\ud800"))
TEXT = st.text(ANY_CHAR | MIXED_CHAR, max_size=80)
SPECIAL_TEXT = st.lists(st.sampled_from(["[SEP]", "[CLS]", "[MASK]", "[PAD]", "[UNK]", "a", " ", "[SE", "x[SEP]y"]) |
                        TEXT, max_size=6).map("".join)


@pytest.fixture(params=KINDS)
def tok(request, oracle_paths):
    return tokkit.load(oracle_paths[request.param])


def assert_flat_equals_lists(tok, texts, threads):
    ids, offsets = tok.encode_batch_flat(texts, num_threads=threads)
    assert ids.dtype == np.uint32 and offsets.dtype == np.int64
    assert offsets.shape == (len(texts) + 1,) and offsets[0] == 0 and offsets[-1] == ids.size
    rows = tok.encode_batch(texts, num_threads=threads)
    assert [ids[offsets[r]:offsets[r + 1]].tolist() for r in range(len(texts))] == rows
    for text, row in zip(texts, rows):
        arr = tok.encode_to_numpy(text)
        assert arr.dtype == np.uint32 and arr.tolist() == row
        # the offsets path reads code points, not UTF-8: an independent scanner for byte-level text
        assert tok.encode_with_offsets(text).ids == row


def test_edge_cases_and_lines(tok):
    texts = EDGE_CASES + sample_lines(5)
    for threads in (1, 2, 3, 7):
        assert_flat_equals_lists(tok, texts, threads)


def test_big_batch_joined_by_threads(tok):
    # over 2**18 ids: the slices' ids are copied into the answer by the threads (FlatJob.join_work)
    lines = [f"line {i} " + "word é中 " * (i % 7 + 8) for i in range(12000)] + EDGE_CASES
    job = tok._encoder.flat_job(lines, [0, 3000, 6000, 9000, len(lines)])
    if job is None:  # a kind whose encoder has no shared job
        return
    job.work(max_slices=2)  # two "threads" taking slices out of order
    job.work()
    assert job.plan_join() is True
    job.join_work()
    ids, offsets = job.result()
    assert ids.size >= 1 << 18 and offsets[-1] == ids.size
    rows = tok.encode_batch(lines, num_threads=1)
    assert [ids[offsets[r]:offsets[r + 1]].tolist() for r in range(len(lines))] == rows
    for threads in (2, 3):
        got, got_offsets = tok.encode_batch_flat(lines, num_threads=threads)
        assert np.array_equal(got, ids) and np.array_equal(got_offsets, offsets)


def test_whole_text_equals_encode(tok):
    text = "\n".join(sample_lines(20))
    assert tok.encode_to_numpy(text).tolist() == tok.encode(text)
    assert tok.encode_to_numpy("").shape == (0,)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_hypothesis_any_code_point(tok, threads):
    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.one_of(TEXT, SPECIAL_TEXT), max_size=12))
    def check(texts):
        assert_flat_equals_lists(tok, texts, threads)

    check()


def test_empty_batches_and_empty_texts(tok):
    ids, offsets = tok.encode_batch_flat([])
    assert ids.shape == (0,) and ids.dtype == np.uint32 and offsets.tolist() == [0]
    ids, offsets = tok.encode_batch_flat(["", "", ""], num_threads=2)
    assert ids.size == 0 and offsets.tolist() == [0, 0, 0, 0]


def test_split_special_tokens_flag_is_honoured(oracle_paths):
    tok = tokkit.load(oracle_paths["wordpiece"], split_special_tokens=True)
    text = "a [SEP] b"
    ids, offsets = tok.encode_batch_flat([text, text])
    assert ids[offsets[0]:offsets[1]].tolist() == tok.encode(text)
    assert tok.token_to_id("[SEP]") not in ids.tolist()


def test_bad_inputs_raise(tok):
    with pytest.raises(TypeError):
        tok.encode_to_numpy(b"bytes")
    with pytest.raises(TypeError):
        tok.encode_batch_flat("one string")
    with pytest.raises(TypeError):
        tok.encode_batch_flat(["ok", 3])


def test_custom_pattern_bytelevel(oracle_paths, tmp_path):
    base = tokkit.load(oracle_paths["bytelevel"])
    tok = tokkit.Tokenizer.from_trained(kind="bytelevel", vocab=base.spec.vocab, merges=base.spec.pipeline.model.merges,
                                        special_tokens=["[PAD]", "[CLS]", "[SEP]"], pattern=r"\w+|\s+|[^\w\s]+")
    texts = ["hello world [SEP] again", "", "x" * 300, "😀 ok"]
    assert_flat_equals_lists(tok, texts, 2)


def test_join_flat_offsets_continue_across_slices():
    parts = [(np.array([1, 2], np.uint32), np.array([0, 1, 2])), (np.array([], np.uint32), np.array([0, 0])),
             (np.array([3, 4, 5], np.uint32), np.array([0, 3]))]
    ids, offsets = join_flat(parts)
    assert ids.tolist() == [1, 2, 3, 4, 5] and offsets.tolist() == [0, 1, 2, 2, 5]


def shared_job(tok, texts, bounds):
    job = tok._encoder.flat_job(texts, bounds)
    assert job is not None, "every fixture kind has the compiled encoder and no custom pattern"
    return job


def test_flat_job_joins_slices_from_several_calls(tok):
    texts, _ = check_texts(EDGE_CASES + sample_lines(40))
    bounds = [0, 1, 5, 6, 20, len(texts) - 3, len(texts)]
    job = shared_job(tok, texts, bounds)
    job.work(max_slices=2)  # slices 0 and 1 in one Rows
    job.work(max_slices=1)  # slice 2 alone
    job.work(max_slices=0)  # takes nothing
    job.work()              # the rest
    ids, offsets = job.result()
    assert offsets.tolist()[0] == 0 and len(offsets) == len(texts) + 1
    expected = tok.encode_batch(texts, num_threads=1)
    assert [ids[offsets[r]:offsets[r + 1]].tolist() for r in range(len(texts))] == expected


def test_flat_job_on_racing_threads(tok):
    texts, _ = check_texts(sample_lines(300) * 3)
    expected = tok.encode_batch(texts, num_threads=1)
    for _ in range(5):
        job = shared_job(tok, texts, list(range(0, len(texts), 7)) + [len(texts)])
        workers = [threading.Thread(target=job.work) for _ in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        ids, offsets = job.result()
        assert [ids[offsets[r]:offsets[r + 1]].tolist() for r in range(len(texts))] == expected


@needs_corpus
@pytest.mark.corpus
def test_wiki_lines_on_threads(tok):

    text = sorted((SHARED / "en" / "wiki").glob("*.txt"))[2].read_text(encoding="utf-8")[:1_000_000]
    lines = text.split("\n")
    assert_flat_equals_lists(tok, lines[:3000], 2)
    assert tok.encode_to_numpy(text).tolist() == tok.encode(text)


@pytest.mark.parametrize("threads", [1, 3])
def test_words_without_offsets_match_the_full_path(tok, threads):
    """tokkit.encode without offsets takes the span-free encoder path: same ids, same word numbers."""
    from importlib import import_module

    inputs = import_module("tokkit.inputs.encode")
    texts, sizes = tokkit.tokenizer.check_texts(EDGE_CASES + sample_lines(3) + ["a [SEP] b [CLS]"])
    full = inputs.encode_flat(tok, texts, sizes, threads, offsets=True)
    lean = inputs.encode_flat(tok, texts, sizes, threads, offsets=False)
    assert set(lean) == {"ids", "words", "ptr"}
    for key in ("ids", "words", "ptr"):
        assert np.array_equal(full[key], lean[key]), key
    a = tokkit.encode(tok, texts[:50], max_length=64, padding="max_length", return_offsets=True)
    b = tokkit.encode(tok, texts[:50], max_length=64, padding="max_length")
    for key in b:
        assert np.array_equal(a[key], b[key]), key


def test_warm_caches_give_the_ids_of_a_fresh_tokenizer(oracle_paths):
    """Each thread's caches outlive a call; after many distinct pieces (evictions, collisions in the
    direct-mapped sets, a cache clear) the ids are still those of a tokenizer that starts cold."""
    import random

    rng = random.Random(5)
    alphabet = "abcdefghijklmnopqrstuvwxyzé中😀 .,'"
    noise = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(20000)]
    probe = sample_lines(3) + EDGE_CASES
    for kind in KINDS:
        expected = [tokkit.load(oracle_paths[kind]).encode_with_offsets(text).ids for text in probe[:50]]
        expected += tokkit.load(oracle_paths[kind]).encode_batch(probe[50:], num_threads=1)
        warm = tokkit.load(oracle_paths[kind])
        for _ in range(2):
            warm.encode_batch_flat(noise, num_threads=2)
            warm.encode_to_numpy(" ".join(noise[:5000]))
            assert [warm.encode_to_numpy(text).tolist() for text in probe] == expected, kind
            ids, offsets = warm.encode_batch_flat(probe, num_threads=3)
            assert [ids[offsets[r]:offsets[r + 1]].tolist() for r in range(len(probe))] == expected, kind


# ASCII-heavy text longer than the 64-byte blocks the byte-level scanner classes at once, with the
# cases its bit rules handle: contractions, runs of spaces before words and at the end, other
# whitespace, digits, punctuation, and non-ASCII characters that end a block early.
BLOCK_PARTS = st.sampled_from(["'s", "'re", "'ll", "'t", "'", "''", " ", "  ", "   ", "\n", "\n\n", "\t", "\r\n",
                               "\x0b", "\x1c", "a", "word", "Word", "12", "3.5", ".", ",", "!?", "\u3000", "\u00a0",
                               "é", "中", "😀", "[SEP]", "<|endoftext|>", "\ud800"])
BLOCK_TEXT = st.lists(BLOCK_PARTS, max_size=90).map("".join)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_byte_level_scanner_modes_agree(oracle_paths, mode):
    """SSE2 blocks, SWAR words and one byte at a time all give the pieces of the code-point scanner."""
    tok = tokkit.load(oracle_paths["bytelevel"])
    used = tok._encoder.scan_mode(mode)
    assert used <= mode

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(BLOCK_TEXT, TEXT))
    def check(text):
        assert tok.encode_to_numpy(text).tolist() == tok.encode_with_offsets(text).ids

    check()
    text = "\n".join(sample_lines(30))
    assert tok.encode_to_numpy(text).tolist() == tok.encode_with_offsets(text).ids


def test_piece_tables_cleared_at_their_limit_keep_ids_exact(oracle_paths):
    """A thread's piece table that reaches its cap starts again; the ids do not change."""
    import random

    rng = random.Random(7)
    noise = " ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
                     for _ in range(30000))
    fresh = tokkit.load(oracle_paths["bytelevel"])
    expected = fresh.encode_with_offsets(noise).ids
    small = tokkit.load(oracle_paths["bytelevel"])
    small._encoder.limit_piece_tables(4096)
    half = noise[: noise.index(" ", len(noise) // 2)]
    for _ in range(2):
        assert small.encode_to_numpy(noise).tolist() == expected
        assert small.encode(half) == fresh.encode_with_offsets(half).ids


@pytest.mark.parametrize("specials", [["<|end|>"], ["<|end|>", "<|end of text|>", "<x>"], ["[É]", "中文", "<s>", "😀!"]])
def test_byte_level_added_tokens_found_in_utf8(specials):
    """The UTF-8 path finds added tokens by their first byte (memchr when they share one): longest
    match first, non-ASCII tokens too, the same ids as the code-point path."""
    tok = tokkit.train(texts=["the cat sat on the mat, 中文 too"] * 20, algo="bytelevel", vocab_size=300,
                       special_tokens=specials)
    pieces = specials + ["<|", "<|end", "[É", "中", "😀", "the cat", " ", "<", "[", "\ud800"]

    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(pieces), max_size=30).map("".join))
    def check(text):
        assert tok.encode_to_numpy(text).tolist() == tok.encode_with_offsets(text).ids

    check()


# ASCII words, punctuation and controls around non-ASCII letters, marks, CJK and odd spaces: the
# BERT kinds' ASCII path hands stretches with non-ASCII characters to the general path.
BERT_PARTS = st.sampled_from(["the", "The", "CAT", "a", "12", ".", ",", "'", "-", "[SEP]", "[CLS]", "[MASK]", " ", "  ",
                              "\t", "\n", "\r", "\x00", "\x01", "\x7f", "é", "e\u0301", "\u0301", "中", "文", "\u3000",
                              "\u00a0", "İ", "ß", "\u200d", "😀", "\ud800", "xxxxxxxxxxxxxxxxxxxx", "Ü-ber"])
BERT_TEXT = st.lists(BERT_PARTS, max_size=40).map("".join)


@pytest.mark.parametrize("flags", [(True, True, None, True), (True, True, None, False), (False, False, True, False),
                                   (False, True, False, True)])
@pytest.mark.parametrize("kind", ["wordpiece", "bpe"])
def test_bert_ascii_path_equals_the_general_path(oracle_paths, kind, flags):
    """Ids (and word numbers) without offsets equal those of the offsets path, which always runs
    the general per-code-point normalizer, for every BertNorm setting."""
    import dataclasses

    from tokkit.tokenizer import Tokenizer
    from tokkit.tokenizer.normalizers import BertNormalizer

    base = tokkit.load(oracle_paths[kind])
    pipeline = dataclasses.replace(base.spec.pipeline, normalizer=BertNormalizer(*flags))
    tok = Tokenizer(dataclasses.replace(base.spec, pipeline=pipeline))

    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.one_of(BERT_TEXT, TEXT), min_size=1, max_size=4))
    def check(texts):
        full = [tok.encode_with_offsets(text) for text in texts]
        assert [tok.encode_to_numpy(text).tolist() for text in texts] == [f.ids for f in full]
        rows = tokkit.encode(tok, texts)
        for r, f in enumerate(full):
            n = len(f.ids)
            assert rows["input_ids"][r][1:1 + n].tolist() == f.ids

    check()


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(ANY_CHAR | MIXED_CHAR, max_size=60), st.data())
def test_spliced_equals_encoding_the_spliced_str(oracle_paths, text, data):
    # encode_numpy_spliced writes the replaced text as UTF-8 straight from the str's own: the ids of
    # the str with those stretches replaced, for stretches anywhere (the start, the end, side by side)
    enc = tokkit.load(oracle_paths["bytelevel"])._encoder
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    windows = [(cuts[k], cuts[k + 1]) for k in range(0, len(cuts) - 1, 2)]
    news = [data.draw(st.text(MIXED_CHAR, max_size=4)) for _ in windows]
    parts, at = [], 0
    for (a, b), new in zip(windows, news):
        parts += [text[at:a], new]
        at = b
    spliced = "".join(parts) + text[at:]
    got = enc.encode_numpy_spliced(text, windows, news)
    if got is None:  # lone surrogates: no UTF-8 to read
        assert any(0xD800 <= ord(c) <= 0xDFFF for c in text + "".join(news))
    else:
        assert got.tolist() == enc.encode_numpy(spliced).tolist()
