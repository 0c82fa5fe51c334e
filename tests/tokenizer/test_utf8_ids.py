"""The general path's ids without offsets over UTF-8 (pipeline_utf8.hpp, pipeline_ids.hpp).

When no offsets are asked for, a text goes through the normalizer and the pre-tokenizer as UTF-8
with no alignments. Its ids (and word numbers) must be the path with alignments' and tokenizers' ids,
for every normalizer, pre-tokenizer and model the UTF-8 path covers, on hostile and multilingual
text: each text is encoded by an encoder with the UTF-8 path (`encode`, `encode_many`, `encode_flat`,
`encode_rows` without offsets), by one without it (`utf8_ids=False`), by the offsets path
(`encode_full`) and by tokenizers. Pipelines
whose steps the UTF-8 path does not cover keep the old path (`utf8_ids` is off for them).
"""
from __future__ import annotations

import base64
import json

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokkit
from tokkit._native.byte_symbols import bytes_to_unicode
from tokkit._native.patterns import GPT2_PATTERN
import tokkit.tokenizer.normalizers
from tokkit._native.pipeline import ModelKind, NormKind, PipelineEncoder, token_blob
from tokkit.tokenizer import plan as plan_module
from tokkit.tokenizer.plan import plan
from tokkit.tokenizer.encoders import general_encoder, native
from tokkit.tokenizer.precompiled import build_charsmap

# hostile atoms (zero-width chars, marks, CR LF, runs of spaces, U+2581, Prepend-class chars) and
# multilingual ones (CJK, Hangul, Arabic, Devanagari conjuncts, Thai, emoji sequences, flags)
ATOMS = ["a", "b", "x", "ab", "A", "1", "12", "!", "'s", " ", "  ", "   ", "\t", "\n", "\r\n", "\r", "\u200b",
         "\u200e", "\ufeff", "\ufffd", "\u200c", "\u200d", "\u0301", "e\u0301", "\u00e9", "\u00a8", "\u00a0",
         "\u3000", "\ufb01", "\u03a3", "\u2581", "\u2581\u2581", "\u00b2", "\u0600", "\u2028", "\u00ad",
         "\u65e5\u672c\u8a9e", "\ud55c\uad6d\uc5b4", "\u1100\u1161\u11a8", "\u0627\u0644\u0639\u0631\u0628\u064a\u0629",
         "\u0915\u094d\u0937", "\u0e44\u0e17\u0e22", "\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469\u200d\U0001f467",
         "\U0001f1eb\U0001f1f7", "\u00c5", "A\u030a", "\u1e9e", "\u0130", "\U00010400", "<s>", "</s>"]
TEXTS = st.lists(st.sampled_from(ATOMS), max_size=16).map("".join)
CHARSMAP = build_charsmap({"\u200b": " ", "\u200e": " ", "\ufeff": " ", "\ufffd": " ", "\u3000": " ", "\u00a0": " ",
                           "\ufb01": "fi", "\u00ad": "", "\u2581": " ", "\u00b2": "2", "\t": " ", "\n": " ",
                           "e\u0301": "\u00e9", "A": "a", "\u0915\u094d": "k", "!": ""})
CHARSMAP_B64 = base64.b64encode(CHARSMAP).decode("ascii")
BYTES = [f"<0x{b:02X}>" for b in range(256)]


def _replace(pattern: dict, content: str) -> dict:
    return {"type": "Replace", "pattern": pattern, "content": content}


NORMALIZERS = st.one_of(
    st.sampled_from([{"type": t} for t in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Nmt")]),
    st.builds(lambda left, right: {"type": "Strip", "strip_left": left, "strip_right": right},
              st.booleans(), st.booleans()),
    st.builds(lambda p, c: _replace({"String": p}, c),
              st.sampled_from(["a", "x", " ", "\u200b", "\u0301", "ab", "\u00e9", "\u2581", "\u65e5"]),
              st.sampled_from(["", "y", " ", "\u2581", "a ", "\u00e9\u00e9"])),
    st.builds(lambda c: _replace({"Regex": " {2,}"}, c), st.sampled_from([" ", "\u2581", "", "y"])),
    st.just({"type": "Precompiled", "precompiled_charsmap": CHARSMAP_B64}),
    st.builds(lambda c: {"type": "Prepend", "prepend": c}, st.sampled_from(["\u2581", "ab"])),
)
PRE_TOKENIZERS = st.one_of(
    st.builds(lambda scheme, split, rep: {"type": "Metaspace", "replacement": rep, "prepend_scheme": scheme,
                                          "split": split},
              st.sampled_from(["always", "first", "never"]), st.booleans(), st.sampled_from(["\u2581", "_"])),
    st.sampled_from([{"type": "WhitespaceSplit"}, {"type": "Whitespace"}, {"type": "BertPreTokenizer"},
                     {"type": "Punctuation", "behavior": "Isolated"}, {"type": "CharDelimiterSplit", "delimiter": "a"},
                     {"type": "Punctuation", "behavior": "MergedWithPrevious"}]),
    st.builds(lambda individual: {"type": "Digits", "individual_digits": individual}, st.booleans()),
    st.builds(lambda prefix, regex: {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": True,
                                     "use_regex": regex}, st.booleans(), st.booleans()),
    st.builds(lambda pattern, behavior, invert: {"type": "Split", "pattern": pattern, "behavior": behavior,
                                                 "invert": invert},
              st.sampled_from([{"Regex": GPT2_PATTERN}, {"Regex": "\\w+|[^\\w\\s]+"}, {"String": " "},
                               {"String": "\u2581"}, {"String": "ab"}, {"String": ""}, {"Regex": "\\s+"}]),
              st.sampled_from(["Isolated", "Removed", "MergedWithNext", "MergedWithPrevious", "Contiguous"]),
              st.booleans()),
)


def _pieces() -> list[str]:
    chars = {c for atom in ATOMS for c in atom} | set(bytes_to_unicode()) | {"\u2581", "_"}
    return sorted(chars) + ["\u2581a", "\u2581b", "\u2581x", "ab", "\u2581\u2581", "a\u2581", "\u2581ab", "\u0120a",
                            "\u2581\u65e5\u672c", "\u65e5\u672c\u8a9e", "_a", "e\u0301"]


def _model(kind: str, byte_fallback: bool) -> dict:
    pieces = [p for p in _pieces() if p not in ("<s>", "</s>")]
    if kind == "wordlevel":
        return {"type": "WordLevel", "vocab": {p: i for i, p in enumerate(["[UNK]"] + pieces)}, "unk_token": "[UNK]"}
    if kind == "wordpiece":
        vocab = ["[UNK]"] + pieces + ["##" + p for p in pieces]
        return {"type": "WordPiece", "vocab": {p: i for i, p in enumerate(vocab)}, "unk_token": "[UNK]",
                "continuing_subword_prefix": "##", "max_input_chars_per_word": 100}
    # the byte tokens cover what the pieces leave out when byte_fallback is on
    singles = [p for p in pieces if len(p) == 1 and not ("\ud800" <= p <= "\udfff")]
    if kind == "unigram":
        vocab = [["<unk>", 0.0]] + [[p, -1.0 - (i % 7) * 0.7] for i, p in enumerate(singles + pieces[len(singles):])]
        vocab += [[b, -20.0] for b in BYTES]
        return {"type": "Unigram", "unk_id": 0, "byte_fallback": byte_fallback, "vocab": vocab}
    merges = [["\u2581", "a"], ["a", "b"], ["\u2581a", "b"], ["\u2581", "\u2581"], ["\u2581", "b"], ["\u2581", "x"],
              ["\u65e5", "\u672c"], ["\u2581", "\u65e5\u672c"], ["e", "\u0301"], ["_", "a"]]
    vocab = ["<unk>"] + BYTES + singles + ["\u2581a", "ab", "\u2581ab", "\u2581\u2581", "\u2581b", "\u2581x",
                                           "\u65e5\u672c", "\u2581\u65e5\u672c", "e\u0301", "_a"]
    return {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": byte_fallback, "ignore_merges": False,
            "vocab": {p: i for i, p in enumerate(dict.fromkeys(vocab))}, "merges": merges}


def _sequence(steps: list, key: str):
    return None if not steps else steps[0] if len(steps) == 1 else {"type": "Sequence", key: steps}


def _doc(normalizer, pre_tokenizer, model: dict, specials: bool) -> dict:
    added = []
    if specials:  # raw special tokens: the text between them is a segment of its own
        n = len(model["vocab"])
        added = [{"id": n + k, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": True} for k, c in enumerate(["<s>", "</s>"])]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "post_processor": None, "decoder": None,
            "model": model}


def _load(doc: dict, folder):
    (folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    return tokkit.load(folder), tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))


def _oracle_ids(oracle, text: str, reference) -> list[int]:
    """tokenizers' ids (oracle None: the path with alignments'), or the path with alignments' where
    tokenizers panics (it does on some insertions before a Unicode form, see docs/hub-files.md)."""
    if oracle is None:
        return reference.encode_full(text)[0]
    try:
        return oracle.encode(text, add_special_tokens=False).ids
    except BaseException as exc:  # pyo3's PanicException derives from BaseException
        if type(exc).__name__ != "PanicException":
            raise
        return reference.encode_full(text)[0]


def _agree(tok, oracle, texts: list[str]) -> None:
    """The UTF-8 path's ids are the old path's, the offsets path's and tokenizers', text by text and in
    batches (with and without the chunk lane)."""
    encoders = {"utf8": general_encoder(tok.spec, False), "utf8 whole": general_encoder(tok.spec, False, lane=False),
                "spans": general_encoder(tok.spec, False, utf8_ids=False)}
    wants = [_oracle_ids(oracle, text, encoders["spans"]) for text in texts]
    for text, want in zip(texts, wants):
        for name, enc in encoders.items():
            assert enc.encode(text) == want, (name, text, enc.encode(text), want)
        assert encoders["utf8"].encode_full(text)[0] == want, text
    full = encoders["spans"].encode_rows(texts, 0, len(texts), True).arrays()
    for name, enc in encoders.items():
        many = enc.encode_many(texts, 0, len(texts))
        ids, _ = enc.encode_flat(texts, 0, len(texts))
        assert many == wants, name
        assert ids.tolist() == [i for row in many for i in row], name
        # ids and word numbers without offsets (tokkit.encode's): the offsets path's
        rows = enc.encode_rows(texts, 0, len(texts), False).arrays()
        assert rows["ids"].tolist() == full["ids"].tolist() and rows["words"].tolist() == full["words"].tolist(), name


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(norms=st.lists(NORMALIZERS, max_size=4), pres=st.lists(PRE_TOKENIZERS, max_size=3),
       kind=st.sampled_from(["unigram", "bpe", "wordlevel", "wordpiece"]), byte_fallback=st.booleans(),
       specials=st.booleans(), texts=st.lists(TEXTS, min_size=1, max_size=10))
def test_random_pipelines_give_the_same_ids_over_utf8_as_with_alignments_and_as_tokenizers(
        tmp_path_factory, norms, pres, kind, byte_fallback, specials, texts):
    doc = _doc(_sequence(norms, "normalizers"), _sequence(pres, "pretokenizers"), _model(kind, byte_fallback),
               specials)
    tok, oracle = _load(doc, tmp_path_factory.mktemp("utf8"))
    assert general_encoder(tok.spec, False).utf8_ids
    _agree(tok, oracle, texts + [" ".join(texts), "  ".join(texts)] + texts)


FIRST = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}


@pytest.mark.parametrize("normalizer", [
    _replace({"String": "x"}, ""), _replace({"String": "x"}, "yy"), _replace({"String": "xx"}, "y"),
    _replace({"Regex": " {2,}"}, "\u2581"), {"type": "StripAccents"},
    {"type": "Nmt"}, {"type": "Strip", "strip_left": True, "strip_right": False},
    {"type": "Prepend", "prepend": "\u2581"}, {"type": "Precompiled", "precompiled_charsmap": CHARSMAP_B64},
], ids=lambda n: json.dumps(n, ensure_ascii=True)[:60])
@pytest.mark.parametrize("pre", [FIRST, {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, FIRST]}],
                         ids=["first", "after-split"])
def test_metaspace_first_after_steps_that_move_the_first_char(tmp_path_factory, normalizer, pre):
    """Metaspace's "first" reads whether a piece's first char comes from offset 0: the UTF-8 path
    follows that through each step, and leaves the text to the spans where only they can tell."""
    tok, oracle = _load(_doc(normalizer, pre, _model("unigram", True), True), tmp_path_factory.mktemp("first"))
    _agree(tok, oracle, ["xa b", "xxa", "x a", "a", "\u0301a b", "\u0301 a", "  a b", "x", "\x01a", "\ta b",
                         "<s>xa</s>x b", "  ", "xx xx", "\u00ada", "!a", "\U0001f44d x"])


PREPEND_NOTHING = {"type": "Prepend", "prepend": ""}
EMPTY_PATTERN = _replace({"String": ""}, "y")


@pytest.mark.parametrize("normalizer", [
    PREPEND_NOTHING, {"type": "Sequence", "normalizers": [PREPEND_NOTHING, _replace({"String": "x"}, "")]},
    {"type": "Sequence", "normalizers": [{"type": "Strip", "strip_left": True, "strip_right": False}, PREPEND_NOTHING]},
    EMPTY_PATTERN, {"type": "Sequence", "normalizers": [_replace({"String": "x"}, ""), EMPTY_PATTERN]},
], ids=["prepend", "prepend-then-x", "strip-then-prepend", "empty-pattern", "x-then-empty-pattern"])
@pytest.mark.parametrize("pre", [FIRST, {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                         "use_regex": False}], ids=["first", "bytelevel"])
def test_insertions_at_the_start_as_the_path_with_alignments(tmp_path_factory, normalizer, pre):
    """Prepend("") and a Replace of the empty pattern insert a char at the text's start, which takes
    the text's own origin: the UTF-8 path gives the path with alignments' ids. (tokenizers panics on
    some of these texts and differs from both on others, so it is no oracle here.)"""
    tok, _ = _load(_doc(normalizer, pre, _model("bpe", True), True), tmp_path_factory.mktemp("prepend"))
    _agree(tok, None, ["xa b", "x", "\u200c", " a", "<s>x a</s>a", "  x", "\u0301a", "", " ", "xx y"])


def test_unigram_pieces_of_every_length_through_the_double_array(tmp_path_factory):
    """The lattice walks a double-array trie: pieces that are prefixes of each other, long ones, and
    ones of multi-byte chars score as tokenizers scores them."""
    pieces = ["a" * k for k in range(1, 40)] + ["\u65e5" * k for k in range(1, 9)] + ["ab", "ba", "\u2581" + "a" * 300]
    vocab = [["<unk>", 0.0]] + [[p, -1.0 - 0.01 * len(p) - (i % 3)] for i, p in enumerate(pieces)]
    doc = _doc(None, None, {"type": "Unigram", "unk_id": 0, "byte_fallback": False, "vocab": vocab}, False)
    tok, oracle = _load(doc, tmp_path_factory.mktemp("dat"))
    _agree(tok, oracle, ["a" * k for k in range(1, 60)] + ["\u65e5" * 20, "ab" * 30, "\u2581" + "a" * 301,
                                                          "\u2581" + "a" * 299, "xa\u65e5b", ""])


@pytest.mark.parametrize("normalizer, on", [
    ({"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
      "lowercase": True}, False),
    (_replace({"Regex": "\\s+"}, " "), False),
    ({"type": "NFKC"}, True),
])
def test_the_utf8_path_is_off_where_a_step_needs_code_points(tmp_path_factory, normalizer, on):
    tok, oracle = _load(_doc(normalizer, {"type": "WhitespaceSplit"}, _model("wordlevel", False), False),
                        tmp_path_factory.mktemp("off"))
    assert general_encoder(tok.spec, False).utf8_ids is on
    assert general_encoder(tok.spec, False, utf8_ids=False).utf8_ids is False
    _agree(tok, oracle, ["a  b\u00e9", "\u65e5 x\t\u0301"])


def _saved_by_tokenizers(tokenizer: tokenizers.Tokenizer, folder):
    """tokenizers' own tokenizer.json for `tokenizer` (as the Hub's files are made), loaded by tokkit."""
    path = folder / "tokenizer.json"
    tokenizer.save(str(path))
    return tokkit.load(path), tokenizers.Tokenizer.from_file(str(path))


def test_metaspaces_that_prepend_another_replacement_before_a_first_scheme(tmp_path_factory):
    """Metaspace(U+2581, always), Metaspace("_", always), Metaspace(U+2581, first): the second puts "_"
    before every piece, so a chunk of the chunk lane no longer starts with U+2581 when "first" reads
    its piece's origin (0 in the chunk, past 0 in the text): the lane must leave such files alone."""
    vocab = [("<unk>", 0.0)] + [(p, -1.0 - 0.3 * i) for i, p in
                                enumerate(["a", "\u2581", "_", "\u2581a", "_\u2581", "\u2581_", "b"])]
    built = tokenizers.Tokenizer(tokenizers.models.Unigram(vocab, 0, False))
    built.pre_tokenizer = tokenizers.pre_tokenizers.Sequence([
        tokenizers.pre_tokenizers.Metaspace("\u2581", "always", True),
        tokenizers.pre_tokenizers.Metaspace("_", "always", True),
        tokenizers.pre_tokenizers.Metaspace("\u2581", "first", True)])
    tok, oracle = _saved_by_tokenizers(built, tmp_path_factory.mktemp("metaspaces"))
    assert tok.encode("a ") == oracle.encode("a ").ids == [6, 4, 3, 2]
    _agree(tok, oracle, ["a ", "a  b", " a", "a b a", "ab  ", "\u2581a _b", "a\u00e9 b"])



def test_a_metaspace_prepending_inside_a_piece_keeps_the_chunk_lane_off(tmp_path_factory):
    """ByteLevel without its regex cuts no piece, so a chunk's space is mid-piece when a Metaspace of
    scheme "always" runs after it: the chunk lane would put U+2581 before each chunk."""
    vocab = [("<unk>", 0.0)] + [(p, -1.0 - 0.3 * i) for i, p in
                                enumerate(["a", "\u2581", "\u0120", "\u2581a", "\u2581\u0120", "a\u0120", "b"])]
    built = tokenizers.Tokenizer(tokenizers.models.Unigram(vocab, 0, False))
    built.pre_tokenizer = tokenizers.pre_tokenizers.Sequence([
        tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        tokenizers.pre_tokenizers.Metaspace("\u2581", "always", True)])
    tok, oracle = _saved_by_tokenizers(built, tmp_path_factory.mktemp("bytelevel-metaspace"))
    assert tok.encode("a ") == oracle.encode("a ").ids
    _agree(tok, oracle, ["a ", "a  b", " a", "a b a", "ab  ", "a\u00e9 b"])


LOWERCASE_THEN_SPLIT = ({"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "NFKC"}]},
                        {"type": "WhitespaceSplit"})


def test_the_plan_names_the_utf8_lane_and_why(tmp_path_factory):
    """plan(spec) decides the UTF-8 lane from its allow-list, says why, and the encoder runs what it says."""
    cases = [(LOWERCASE_THEN_SPLIT, True, "every normalizer and pre-tokenizer step"),
             (({"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
                "lowercase": True}, FIRST), False, "no step for the normalizer BertNormalizer"),
             ((_replace({"Regex": "\\s+"}, " "), FIRST), False,
              "no step for the normalizer Replace({'Regex': '\\\\s+'})")]
    for (normalizer, pre), on, why in cases:
        tok, oracle = _load(_doc(normalizer, pre, _model("wordlevel", False), False), tmp_path_factory.mktemp("plan"))
        the_plan = plan(tok.spec)
        assert (the_plan.engine, the_plan.utf8_ids) == ("general", on) and why in the_plan.utf8_reason
        assert tok._encoder.utf8_ids is on
        _agree(tok, oracle, ["A  b\u00e9", "\u65e5 X\t\u0301", "\ufb01 x"])


def test_a_step_off_the_allow_list_takes_the_alignment_route(tmp_path_factory, monkeypatch):
    """A normalizer step the allow-list does not name (here Lowercase, taken off it) keeps the whole
    pipeline on the path with alignments, whose ids are tokenizers'; none is skipped."""
    monkeypatch.setattr(plan_module, "UTF8_NORMALIZER_STEPS", plan_module.UTF8_NORMALIZER_STEPS - {NormKind.N_LOWER})
    tok, oracle = _load(_doc(*LOWERCASE_THEN_SPLIT, _model("wordlevel", False), False), tmp_path_factory.mktemp("off"))
    assert plan(tok.spec).utf8_ids is False and "Lowercase" in plan(tok.spec).utf8_reason
    assert general_encoder(tok.spec, False).utf8_ids is False
    texts = ["AB a", "\u00c5 \u0130 \u03a3A", "X"]
    assert [tok.encode(t) for t in texts] == [oracle.encode(t).ids for t in texts]
    _agree(tok, oracle, texts)


def test_the_compiled_lane_refuses_a_step_it_lacks_rather_than_skipping_it():
    model = {"kind": ModelKind.M_WORDLEVEL, "unk_id": 0, "tokens": token_blob(["[UNK]", "a"])}
    bert = native(tokkit.tokenizer.normalizers.normalizer_from_json(
        {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
         "lowercase": True}, "t.json"))
    with pytest.raises(ValueError, match="no step of normalizer kind"):
        PipelineEncoder.build(2, bert, [], model, [], utf8_ids=True)
    assert PipelineEncoder.build(2, bert, [], model, []).encode("A") == [1]
