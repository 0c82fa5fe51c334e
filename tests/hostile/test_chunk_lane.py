"""The general path's ids-only chunk lane, and the cases where tokkit's ids left tokenizers'.

The lane (Pipeline::encode_chunks) cuts a text before runs of spaces and adds up the chunks' ids;
tokkit.tokenizer.plan.chunk_lane is its proof. Any normalizer step may make or delete white space
at a chunk's end (a Precompiled map turns U+200B, U+200E, U+FEFF, U+FFFD into a space; StripAccents
and Replace(X, "") delete chars), which a later Replace(" {2,}", " ") or Strip(right) would have
joined with the next chunk's spaces: the compiled lane checks each chunk's end after every step and
gives the rest of the text to the whole-text path when it is white space. The random pipelines
below are built from every supported normalizer and pre-tokenizer, and the ids of the lane
(`encode`), of the whole-text path (`encode_with_offsets`) and of `tokenizers` must agree on texts
of zero-width characters, LRM, BOM, U+FFFD, joiners, runs of spaces and accents.

The other cases tokenizers decides differently from a first reading of its schema:
- an `rstrip` added token of white space: the next match is searched from the token's own end,
  so it may match again among the spaces it took (and an `lstrip` that leaves nothing drops it);
- Oniguruma's \\w (no joiners U+200C/U+200D; Latin-1's superscripts and fractions outside a class
  only) and \\d;
- Metaspace's "first" scheme after a normalizer that deletes the text's first chars;
- a normalized added token the normalizer deletes (refused: tokenizers splits every byte then);
- Unigram scores read from JSON as serde_json reads them (a step from the nearest double at times).
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Regex, pre_tokenizers

import tokkit
from tokkit._native.byte_symbols import bytes_to_unicode
from tokkit._native.patterns import GPT2_PATTERN
from tokkit.errors import TokkitError
from tokkit.tokenizer.models.unigram import serde_float
from tokkit.tokenizer.onig_regex import regex_of
from tokkit.tokenizer.plan import plan
from tokkit.tokenizer.precompiled import build_charsmap

ATOMS = ["a", "b", "x", "ab", " ", "  ", "   ", "\t", "\n", "\r\n", "\u200b", "\u200e", "\ufeff", "\ufffd",
         "\u200c", "\u200d", "\u0301", "e\u0301", "\u00e9", "\u00a8", "\u00a0", "\u3000", "\ufb01", "\u03a3", "'s",
         "1", "12", "!", "\u2581", "``", "''", "A", "\u00b2", "\u0600", "\u2028"]
ALPHABET = sorted({c for atom in ATOMS for c in atom})
# a character map as SentencePiece's nmt_nfkc has it for these chars (spaces of the invisible ones)
CHARSMAP = build_charsmap({"\u200b": " ", "\u200e": " ", "\ufeff": " ", "\ufffd": " ", "\u3000": " ", "\u00a0": " ",
                           "\ufb01": "fi", "\u00ad": "", "\u2581": " ", "\u00b2": "2"})
CHARSMAP_B64 = __import__("base64").b64encode(CHARSMAP).decode("ascii")

TEXTS = st.lists(st.sampled_from(ATOMS), max_size=14).map("".join)


def _replace(pattern: dict, content: str) -> dict:
    return {"type": "Replace", "pattern": pattern, "content": content}


NORMALIZERS = st.one_of(
    st.sampled_from([{"type": t} for t in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Nmt")]),
    st.builds(lambda left, right: {"type": "Strip", "strip_left": left, "strip_right": right},
              st.booleans(), st.booleans()),
    st.builds(lambda p, c: _replace({"String": p}, c),
              st.sampled_from(["a", "x", "\u200b", "``", "''", "\u0301", "\t", " ", "ab", "\u00e9"]),
              st.sampled_from(["", '"', "y", " ", "\u2581", "\t", "a "])),
    st.builds(lambda p, c: _replace({"Regex": p}, c), st.sampled_from([" {2,}", " {2,}", "\\s+", "\\w+", "x+"]),
              st.sampled_from([" ", "\u2581", "", "y"])),
    st.just({"type": "Precompiled", "precompiled_charsmap": CHARSMAP_B64}),
    st.just({"type": "Prepend", "prepend": "\u2581"}),
    st.builds(lambda lower: {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                             "strip_accents": None, "lowercase": lower}, st.booleans()),
)
PRE_TOKENIZERS = st.one_of(
    st.builds(lambda scheme, split: {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme,
                                     "split": split},
              st.sampled_from(["always", "first", "never"]), st.booleans()),
    st.sampled_from([{"type": "WhitespaceSplit"}, {"type": "Whitespace"}, {"type": "BertPreTokenizer"},
                     {"type": "Punctuation", "behavior": "Isolated"}]),
    st.builds(lambda individual: {"type": "Digits", "individual_digits": individual}, st.booleans()),
    st.builds(lambda prefix, regex: {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": True,
                                     "use_regex": regex}, st.booleans(), st.booleans()),
    st.builds(lambda pattern, behavior: {"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior,
                                         "invert": False},
              st.sampled_from([GPT2_PATTERN, "\\w+|[^\\w\\s]+", " ", "\\s+"]),
              st.sampled_from(["Isolated", "Isolated", "Removed", "MergedWithNext"])),
)


def _sequence(steps: list, key: str):
    return None if not steps else steps[0] if len(steps) == 1 else {"type": "Sequence", key: steps}


def _pieces() -> list[str]:
    chars = set(ALPHABET) | set(bytes_to_unicode()) | {"\u2581"}
    return sorted(chars) + ["\u2581a", "\u2581b", "\u2581x", "ab", "\u2581\u2581", "a\u2581", " a", "a ", "\u0120a",
                            "\u0120\u0120", "\u2581\u2581\u2581", "\u2581ab", "\u0120ab"]


def _model(kind: str, scores: list[float]) -> dict:
    pieces = _pieces()
    if kind == "wordlevel":  # every piece boundary shows in the ids
        return {"type": "WordLevel", "vocab": {p: i for i, p in enumerate(["[UNK]"] + pieces)}, "unk_token": "[UNK]"}
    return {"type": "Unigram", "unk_id": 0, "byte_fallback": False,
            "vocab": [["<unk>", 0.0]] + [[p, -1.0 - 9.0 * s] for p, s in zip(pieces, scores * len(pieces))]}


def _load_both(doc: dict):
    folder = Path(tempfile.mkdtemp())
    (folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    return tokkit.load(folder), tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))


def _doc(normalizer=None, pre_tokenizer=None, model=None, added=()) -> dict:
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": list(added),
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "post_processor": None, "decoder": None,
            "model": model or _model("wordlevel", [0.5])}


def _agree(tok, oracle, texts) -> None:
    """The lane, the whole-text path and tokenizers give the same ids; so does a batch."""
    for text in texts:
        want = oracle.encode(text, add_special_tokens=False).ids
        assert tok.encode(text) == want, (text, tok.encode(text), want)
        assert tok.encode_with_offsets(text).ids == want, text
    ids, offsets = tok.encode_batch_flat(texts, num_threads=1)
    assert ids.tolist() == [i for text in texts for i in tok.encode(text)]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(norms=st.lists(NORMALIZERS, max_size=4), pres=st.lists(PRE_TOKENIZERS, min_size=1, max_size=3),
       kind=st.sampled_from(["wordlevel", "unigram"]), scores=st.lists(st.floats(0, 1), min_size=1, max_size=7),
       texts=st.lists(TEXTS, min_size=1, max_size=12))
def test_random_pipelines_give_the_same_ids_on_the_lane_the_whole_text_path_and_tokenizers(norms, pres, kind,
                                                                                               scores, texts):
    tok, oracle = _load_both(_doc(_sequence(norms, "normalizers"), _sequence(pres, "pretokenizers"),
                                  _model(kind, scores)))
    # chunks are remembered across texts: the same chunks again, after other texts, and joined by spaces
    _agree(tok, oracle, texts + [" ".join(texts), "  ".join(texts)] + texts)


# ------------------------------------------------------------------------------ ALBERT / XLNet files
CONVERTER = {"type": "Sequence", "normalizers": [
    _replace({"String": "``"}, '"'), _replace({"String": "''"}, '"'), {"type": "NFKD"}, {"type": "StripAccents"},
    {"type": "Lowercase"}, {"type": "Precompiled", "precompiled_charsmap": CHARSMAP_B64},
    _replace({"Regex": " {2,}"}, " ")]}
METASPACE = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
ZERO_WIDTH = ["hello\u200b world", "hello\u200e world", "hello\ufeff world", "hello\ufffd world", "x \u0301 y",
              "a\t\u0301 b", "a\u00a8 b", "a \u200d b", "\u200b", "\u200b b", "a\u200b", "a \u200b  \u200b b"]


@pytest.mark.parametrize("model", ["wordlevel", "unigram"])
def test_albert_and_xlnet_style_files_keep_the_lane_and_tokenizers_ids(model):
    """transformers' AlbertConverter and XLNetConverter normalizer: a zero-width char, LRM, BOM or
    U+FFFD before a space made the lane give an extra U+2581 token."""
    tok, oracle = _load_both(_doc(CONVERTER, METASPACE, _model(model, [0.3, 0.7])))
    assert plan(tok.spec).chunk_lane  # the lane stays on for these files: only ragged chunks go whole
    _agree(tok, oracle, ZERO_WIDTH + ["plain text with  spaces", "a b c " * 30])


def test_a_right_strip_after_a_map_that_makes_spaces():
    doc = _doc({"type": "Sequence", "normalizers": [{"type": "Precompiled", "precompiled_charsmap": CHARSMAP_B64},
                                                    {"type": "Strip", "strip_left": False, "strip_right": True},
                                                    _replace({"Regex": " {2,}"}, "\u2581")]}, METASPACE)
    tok, oracle = _load_both(doc)
    assert plan(tok.spec).chunk_lane
    _agree(tok, oracle, ZERO_WIDTH + ["a  b", "a   b  ", "x\u200b  y"])


# ------------------------------------------------------------------------------ added tokens
def _added(content: str, idx: int, **flags) -> dict:
    return {"id": idx, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": False, **flags}


@pytest.mark.parametrize("content", [" ", "\t", "  "])
@pytest.mark.parametrize("flags", [dict(rstrip=True), dict(lstrip=True), dict(lstrip=True, rstrip=True)],
                         ids=["rstrip", "lstrip", "both"])
def test_added_tokens_of_white_space_with_strip_flags(content, flags):
    vocab = _model("wordlevel", [0.5])["vocab"]
    tok, oracle = _load_both(_doc(pre_tokenizer={"type": "WhitespaceSplit"},
                                  added=[_added(content, vocab[content] if content in vocab else len(vocab), **flags)]))
    _agree(tok, oracle, ["a b", "a  b", "a \t b", " a", "a ", "   ", "a\t\tb", "a\t b", "a    \t\t  b  "])


def test_a_normalized_added_token_the_normalizer_deletes_is_refused():
    vocab = _model("wordlevel", [0.5])["vocab"]
    doc = _doc(_replace({"String": "x"}, ""), {"type": "WhitespaceSplit"},
               added=[_added("x", vocab["x"], normalized=True)])
    folder = Path(tempfile.mkdtemp())
    (folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(TokkitError, match="turns it into nothing"):
        tokkit.load(folder)
    oracle = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    # the empty pattern cuts the text between every two bytes ...
    assert oracle.encode("axb").ids == [vocab["a"], vocab["b"]]
    with pytest.raises(BaseException, match="bad split"):  # ... and fails on any character of two bytes
        oracle.encode("a\u00e9b")


# ------------------------------------------------------------------------------ Metaspace "first"
@pytest.mark.parametrize("normalizer", [_replace({"String": "x"}, ""), {"type": "StripAccents"},
                                        {"type": "Strip", "strip_left": True, "strip_right": False}])
def test_metaspace_first_after_a_normalizer_that_deletes_the_first_chars(normalizer):
    first = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}
    tok, oracle = _load_both(_doc(normalizer, first))
    _agree(tok, oracle, ["xa b", "xxa", "x a", "a", "\u0301a b", "\u0301 a", "  a b", "x"])


# ------------------------------------------------------------------------------ Oniguruma's classes
CLASS_FORMS = [r"\w", r"\W", r"[\w]", r"[^\w]", r"[\W]", r"[^\W]", r"[\w\s]", r"[^\w\s]", r"[\W\s]", r"\d", r"\D",
               r"[\d]", r"[^\d]"]


@pytest.mark.slow
@pytest.mark.parametrize("form", CLASS_FORMS)
def test_oniguruma_classes_on_every_code_point(form):
    """Each char alone between two '\\x00': Split(form, "Removed") drops exactly the chars it matches."""
    chars = [c for c in range(1, 0x110000) if not 0xD800 <= c < 0xE000]
    text = "\x00".join(map(chr, chars))
    kept = "".join(p for p, _ in pre_tokenizers.Split(Regex(form), behavior="removed").pre_tokenize_str(text))
    theirs = set(chars) - set(map(ord, kept))
    compiled = regex_of({"Regex": form})
    ours = {c for c in chars if compiled.fullmatch(chr(c))}
    assert sorted(ours ^ theirs)[:20] == []


@pytest.mark.parametrize("pattern", [r"\w+|[^\w\s]+", r"\w+", r"\W+", r"\b", r"[^\w\s]+", r"\d+|\D+"])
def test_word_classes_split_as_tokenizers_does(pattern):
    split = {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}
    tok, oracle = _load_both(_doc(pre_tokenizer=split))
    _agree(tok, oracle, ["a\u200cb", "a\u200db", "\u00b2x", "x\ufeff\u00b2", "!\u00b2!", "\u0600\u00b2", "ab 12",
                         "\u00bd\u00be", "x\u2070\u0661"])


@pytest.mark.parametrize("pattern", [r"\w+", r"[^\w\s]+"])
def test_word_classes_in_a_replace_as_tokenizers_does(pattern):
    tok, oracle = _load_both(_doc(_replace({"Regex": pattern}, "x"), {"type": "WhitespaceSplit"}))
    _agree(tok, oracle, ["a\u200cb c", "\u00b2 \u00b3x", "!\u00b2 a\u200db"])


# ------------------------------------------------------------------------------ Unigram scores
def test_unigram_scores_are_read_as_tokenizers_reads_them():
    """'-14.206999521765617' is one double for Python and the next one up for serde_json: with
    "a" + "b" scoring exactly serde_json's value, tokenizers ties and keeps "ab"; read as Python
    reads it, "a" + "b" would win."""
    ab = "-14.206999521765617"
    assert serde_float(ab) != float(ab)
    b = serde_float(ab) + 7.0
    assert serde_float(repr(b)) == float(repr(b)) == b and -7.0 + b == serde_float(ab)
    text = ('{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [], "normalizer": null, '
            '"pre_tokenizer": null, "post_processor": null, "decoder": null, "model": {"type": "Unigram", '
            '"unk_id": 0, "byte_fallback": false, "vocab": [["<unk>", 0.0], ["a", -7.0], ["b", %r], ["ab", %s]]}}'
            % (b, ab))
    folder = Path(tempfile.mkdtemp())
    (folder / "tokenizer.json").write_text(text, encoding="utf-8")
    tok, oracle = tokkit.load(folder), tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    assert oracle.encode("ab").ids == [3]
    _agree(tok, oracle, ["ab", "abab", "ba"])


@pytest.mark.parametrize("number", ["1e400", "-1.5e309", "123456789012345678901234567890e300"])
def test_a_score_past_the_largest_double_is_one_error(number):
    folder = Path(tempfile.mkdtemp())
    model = '{"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", %s]]}' % number
    (folder / "tokenizer.json").write_text('{"model": %s}' % model, encoding="utf-8")
    with pytest.raises(TokkitError, match="out of range"):
        tokkit.load(folder)
