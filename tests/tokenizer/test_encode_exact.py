"""Exactness: tokkit encodes like `tokenizers` (and byte-level like `tiktoken`) on the same vocabulary."""
import pytest
from helpers.oracles import EDGE_CASES, sample_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokkit

tokenizers = pytest.importorskip("tokenizers")

KINDS = ["wordpiece", "bpe", "bytelevel"]
# every code point tokenizers accepts (it cannot take lone surrogates)
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
MIXED_TEXT = st.text(st.sampled_from(list("ab cé\u0301中😀 \t\n.,!'[]SEP\u200d\u0000\ufffd")) |
                     st.characters(blacklist_categories=("Cs",)), max_size=60)


def _pair(oracle_paths, kind):
    path = oracle_paths[kind]
    return tokkit.load(path), tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))


def assert_same(tok, ref, texts):
    encs = ref.encode_batch(texts, add_special_tokens=False)
    for text, enc in zip(texts, encs):
        ours = tok.encode_with_offsets(text)
        expected = (enc.ids, enc.offsets, enc.word_ids)
        assert (ours.ids, ours.offsets, ours.word_ids) == expected, repr(text[:200])
        assert ours.tokens == enc.tokens
    # the path without offsets (other pre-tokenizer entry, no spans) gives the same ids
    assert tok.encode_batch(texts) == [e.ids for e in encs]


@pytest.mark.parametrize("kind", KINDS)
def test_corpus_lines_equal_tokenizers(oracle_paths, kind):
    tok, ref = _pair(oracle_paths, kind)
    assert_same(tok, ref, sample_lines(30))


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_every_multilingual_line_equals_tokenizers(oracle_paths, kind):
    """Every line: ids, type ids, masks, special masks and offsets of the BERT template, padded."""
    import numpy as np

    tok, ref = _pair(oracle_paths, kind)
    ref.enable_padding(pad_id=0, pad_token="[PAD]")
    lines = sorted(sample_lines(None), key=len)  # similar lengths per chunk keep the padded arrays small
    for start in range(0, len(lines), 2000):
        chunk = lines[start:start + 2000]
        encs = ref.encode_batch(chunk)
        out = tokkit.encode(tok, chunk, truncation=None, return_offsets=True)
        for key, attr in (("input_ids", "ids"), ("token_type_ids", "type_ids"), ("attention_mask", "attention_mask"),
                          ("special_tokens_mask", "special_tokens_mask"), ("offsets", "offsets")):
            expected = np.array([getattr(e, attr) for e in encs])
            bad = np.flatnonzero((out[key] != expected).reshape(len(chunk), -1).any(axis=1))
            assert not bad.size, (key, repr(chunk[bad[0]][:200]))


@pytest.mark.parametrize("kind", KINDS)
def test_hypothesis_any_code_point(oracle_paths, kind):
    tok, ref = _pair(oracle_paths, kind)

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(ANY_TEXT, MIXED_TEXT))
    def check(text):
        assert_same(tok, ref, [text])

    check()


@pytest.mark.parametrize("kind", KINDS)
def test_loading_the_model_files_encodes_the_same(oracle_paths, kind):
    """vocab.txt / vocab.json + merges.txt written by tokenizers load to the same tokenizer."""
    tok, ref = _pair(oracle_paths, kind)
    name = "vocab.txt" if kind == "wordpiece" else "vocab.json"
    other = tokkit.load(oracle_paths[kind] / name)
    assert other.kind == kind
    lines = sample_lines(5)
    assert other.encode_batch(lines) == tok.encode_batch(lines)


@pytest.mark.parametrize("kind", KINDS)
def test_decode_matches_tokenizers(oracle_paths, kind):
    tok, ref = _pair(oracle_paths, kind)
    for text in sample_lines(3):
        ids = tok.encode(text)
        with_specials = [tok.token_to_id("[CLS]")] + ids + [tok.token_to_id("[SEP]")]
        assert tok.decode(with_specials) == ref.decode(with_specials, skip_special_tokens=False)
        assert tok.decode(with_specials, skip_special_tokens=True) == ref.decode(with_specials)


def test_bytelevel_roundtrip_every_valid_string(oracle_paths):
    tok = tokkit.load(oracle_paths["bytelevel"])
    for text in sample_lines(30):
        assert tok.decode(tok.encode(text)) == text

    @settings(max_examples=300, deadline=None)
    @given(ANY_TEXT)
    def check(text):
        assert tok.decode(tok.encode(text)) == text

    check()


def test_bytelevel_equals_tiktoken(oracle_paths):
    """tiktoken built from the same merges, with the GPT-2 (r50k) pattern."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken_ext.openai_public import r50k_pat_str

    from tokkit._native.byte_symbols import decode_symbols

    tok = tokkit.load(oracle_paths["bytelevel"])
    ranks = {bytes([b]): b for b in range(256)}
    for a, b in tok.spec.pipeline.model.merges:
        ranks.setdefault(decode_symbols(a) + decode_symbols(b), len(ranks))
    enc = tiktoken.Encoding("oracle", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={})
    table = {i: decode_symbols(t) for i, t in enumerate(tok.spec.vocab)}
    lines = sample_lines(30) + EDGE_CASES
    for text in lines:
        theirs = [enc.decode_single_token_bytes(t) for t in enc.encode_ordinary(text)]
        ours = [table[i] for i in tok._encoder.encode(text)]
        if "[" in text:
            continue  # tiktoken's encode_ordinary ignores tokkit's special tokens in the text
        assert ours == theirs, repr(text[:200])


def test_tokkit_written_files_encode_identically_in_tokenizers(oracle_paths, tmp_path):
    for kind in KINDS:
        tok = tokkit.load(oracle_paths[kind])
        tok.save(tmp_path / kind)
        ref = tokenizers.Tokenizer.from_file(str(tmp_path / kind / "tokenizer.json"))
        assert_same(tok, ref, sample_lines(5))
        pair = ref.encode("hello world", "second part")
        out = tokkit.encode(tok, ["hello world"], ["second part"], return_offsets=True)
        assert out["input_ids"][0].tolist() == pair.ids
        assert out["token_type_ids"][0].tolist() == pair.type_ids


@pytest.mark.parametrize("kind", KINDS)
def test_long_texts_equal_tokenizers(oracle_paths, kind):
    """Texts far longer than the byte-level chunk size (8192 chars), cut points included."""
    tok, ref = _pair(oracle_paths, kind)
    body = "\n".join(sample_lines(20))
    texts = [body[:300_000], "a" + " " * 20000 + "b", "x  " * 10000, ("word. \u00a0 " * 3000),
             ("ab" * 5000 + " ") * 3, "\n\n".join(["para graph"] * 5000), " " * 9000 + "!" + " " * 9000]
    assert_same(tok, ref, texts)


def test_bytelevel_custom_pattern_equals_tokenizers(oracle_paths, tmp_path):
    """A non-GPT-2 pattern: tokkit writes Split(regex, isolated) + ByteLevel(use_regex=false)."""
    from tokkit.text.pretokenize import GPT2_PATTERN
    from tokkit.tokenizer import Tokenizer
    from tokkit.tokenizer.plan import plan

    base = tokkit.load(oracle_paths["bytelevel"])
    spec = base.spec
    merges = spec.pipeline.model.merges
    same = Tokenizer.from_trained(kind="bytelevel", vocab=spec.vocab, merges=merges,
                                  special_tokens=base.special_tokens, pattern=GPT2_PATTERN)
    # the GPT-2 pattern spelled out is ByteLevel's own regex, which the built-in scanner runs
    assert type(same.spec.pipeline.pre_tokenizer).__name__ == "ByteLevel"
    assert plan(same.spec).form.pattern is None and same.encode_batch(sample_lines(5)) == base.encode_batch(sample_lines(5))
    pattern = r"\p{L}+|\p{N}|[^\s\p{L}\p{N}]+|\s+"
    tok = Tokenizer.from_trained(kind="bytelevel", vocab=spec.vocab, merges=merges,
                                 special_tokens=base.special_tokens, pattern=pattern)
    tok.save(tmp_path)
    ref = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert_same(tok, ref, sample_lines(5) + ["x[SEP]y [CLS]", "  \n\t a1b22"])
    assert tokkit.load(tmp_path) == tok


@settings(max_examples=200, deadline=None)
@given(st.lists(st.none() | st.text(st.sampled_from(["Ġ", "a", "Ã", "©", "中", "\ud800", "Ċ", "ĉ", "ÿ"]) | st.characters(),
                                    max_size=6), max_size=30))
def test_symbols_decoded_all_at_once_as_one_by_one(tokens):
    # the fast encoder reads a vocabulary's byte symbols in one pass; each token as decode_symbols does
    from tokkit._native.byte_symbols import decode_symbols, decode_symbols_all

    assert decode_symbols_all(tokens) == [None if t is None else decode_symbols(t) for t in tokens]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.none() | st.text(st.sampled_from(["a", "é", "中", "\ud800", "\U0001f600", "Ġ"]) | st.characters(),
                                    max_size=6), max_size=30))
def test_longest_token_from_the_code_point_arrays(tokens):
    # the fast encoder's longest token (in characters and in UTF-8 bytes) comes from one array of code points
    from tokkit._native.byte_symbols import code_point_runs

    present = [t for t in tokens if t is not None]
    runs = code_point_runs(tokens)
    assert runs.max_chars() == max(map(len, present), default=0)
    assert runs.max_utf8_bytes() == max((len(t.encode("utf-8", "surrogatepass")) for t in present), default=0)
    assert runs.present.tolist() == [t is not None for t in tokens]
