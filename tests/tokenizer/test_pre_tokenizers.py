"""Pre-tokenizer components against tokenizers: the JSON written back, the pieces, their offsets and the
span of every character in them.

The oracle's per-character spans come from a Tokenizer whose pre-tokenizer is the one under test
followed by a Split isolating every character, with a WordLevel model that knows only the unknown
token: each token is one character of a piece, its offsets that character's span.
"""
import json
from functools import lru_cache

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import AddedToken, Regex, Tokenizer, models
from tokenizers import normalizers as hf_norm
from tokenizers import pre_tokenizers as hf

import tokkit
from tokkit.errors import TokkitError
from tokkit.tokenizer.aligned import aligned
from tokkit.tokenizer.normalizers import normalizer_from_json
from tokkit.tokenizer.pre_tokenizers import Metaspace, pre_tokenizer_from_json, pre_tokenizer_to_json

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EACH_CHAR = hf.Split(Regex(r"[\s\S]"), "isolated")
HARD = ["a", "B", "é", "e\u0301", "1", "٣", "½", "Ⅷ", "\U0001e4f0", ",", "!", "'s", "'S", "'ll", " ", "  ",
        "     ", "\u00a0", "\u3000", "\u205f", "\u2028", "\u1680", "\t", "\n", "\r\n", "\r", "中", "한",
        "👩\u200d👩", "\x00", "▁", "_", "-", "'", "x", "ab", "\u0301", "\u0e33", "\U0001d7d8", "\u00b2", "\u2160",
        "\x1c", "\u0345"]
TEXT = st.one_of(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
                 st.lists(st.sampled_from(HARD), max_size=8).map("".join))
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"
          r"\s+(?!\S)|\s+")
GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

PRE_TOKENIZERS = [
    hf.Metaspace(), hf.Metaspace(prepend_scheme="first"), hf.Metaspace(prepend_scheme="never"),
    hf.Metaspace(split=False), hf.Metaspace(replacement="_", prepend_scheme="first", split=False),
    hf.Split("a", "removed"), hf.Split("ab", "isolated", invert=True), hf.Split(Regex(r"\s+"), "merged_with_previous"),
    hf.Split(Regex(r"\d"), "merged_with_next", invert=True), hf.Split(Regex("x*"), "contiguous"),
    hf.Split(Regex(r"\p{L}+"), "isolated"), hf.Split(Regex("^|$"), "isolated"),
    hf.Split(Regex(r"[^\s\p{N}]+"), "removed"), hf.Split(Regex(r"a\Z"), "isolated"),
    hf.Split(Regex(r"\n\Z|b\z"), "merged_with_previous"),
    hf.Split(Regex(LLAMA3), "isolated"), hf.Split(Regex(GPT2), "removed", invert=True),
    hf.ByteLevel(), hf.ByteLevel(add_prefix_space=False), hf.ByteLevel(use_regex=False),
    hf.Whitespace(), hf.WhitespaceSplit(), hf.Punctuation(), hf.Punctuation("contiguous"), hf.Punctuation("removed"),
    hf.Punctuation("merged_with_previous"), hf.Punctuation("merged_with_next"), hf.Digits(), hf.Digits(True),
    hf.BertPreTokenizer(), hf.CharDelimiterSplit("-"),
    hf.Sequence([hf.WhitespaceSplit(), hf.Metaspace(prepend_scheme="first")]),
    hf.Sequence([hf.Split(Regex(LLAMA3), "isolated"), hf.ByteLevel(add_prefix_space=False, use_regex=False)]),
    hf.Sequence([hf.Punctuation(), hf.Metaspace(prepend_scheme="first", split=False), hf.Digits(True)]),
    hf.Sequence([hf.Sequence([hf.Digits(False)]), hf.Whitespace()]),
]
IDS = [p.__getstate__().decode()[:70] for p in PRE_TOKENIZERS]


def as_json(pre) -> dict:
    return json.loads(pre.__getstate__())


@lru_cache(maxsize=None)
def oracle(pre_json: str, norm_json: str = "null", added: str = "") -> Tokenizer:
    data = json.loads(Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")).to_str())
    data["normalizer"] = json.loads(norm_json)
    data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [json.loads(pre_json), as_json(EACH_CHAR)]}
    tok = Tokenizer.from_str(json.dumps(data))
    if added:
        tok.add_tokens([AddedToken(added, normalized=False)])
    return tok


@lru_cache(maxsize=None)
def hf_pre_tokenizer(obj_json: str):
    data = json.loads(Tokenizer(models.WordLevel({"x": 0}, unk_token="x")).to_str())
    data["pre_tokenizer"] = json.loads(obj_json)
    return Tokenizer.from_str(json.dumps(data)).pre_tokenizer


def expected(obj: dict, text: str):
    """tokenizers' pieces with their offsets, and the span of every character of the pieces."""
    pieces = hf_pre_tokenizer(json.dumps(obj)).pre_tokenize_str(text)
    spans = [tuple(o) for o in oracle(json.dumps(obj)).encode(text).offsets]
    return [(p, tuple(o)) for p, o in pieces], spans


def twin(obj: dict, text: str):
    pieces = pre_tokenizer_from_json(obj, "t.json").pre_tokenize([aligned(text)])
    return [(p, (s[0][0], s[-1][1])) for p, s in pieces], [span for _, s in pieces for span in s]


# ------------------------------------------------------------------------------------ JSON

@pytest.mark.parametrize("pre", PRE_TOKENIZERS, ids=IDS)
def test_json_written_back_as_tokenizers_writes_it(pre):
    obj = as_json(pre)
    assert pre_tokenizer_to_json(pre_tokenizer_from_json(obj, "t.json")) == obj


@pytest.mark.parametrize("obj", [
    {"type": "Metaspace", "replacement": "_"},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True, "str_rep": "▁"},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False, "prepend_scheme": "never"},
    {"type": "Punctuation"},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True},
    {"type": "Sequence", "pretokenizers": []},
])
def test_defaults_and_legacy_fields_as_tokenizers_reads_them(obj):
    data = json.loads(Tokenizer(models.WordLevel({"x": 0}, unk_token="x")).to_str())
    data["pre_tokenizer"] = obj
    written = json.loads(Tokenizer.from_str(json.dumps(data)).to_str())["pre_tokenizer"]
    assert pre_tokenizer_to_json(pre_tokenizer_from_json(obj, "t.json")) == written
    assert pre_tokenizer_from_json(None, "t.json") is None and pre_tokenizer_to_json(None) is None


BAD = [
    ({"type": "UnicodeScripts"}, "pre_tokenizer type 'UnicodeScripts' is not supported"),
    ("Whitespace", "pre_tokenizer must be an object, got a string"),
    ({"type": "Whitespace", "x": 1}, "pre_tokenizer.Whitespace: unknown field 'x'"),
    ({"type": "Metaspace"}, "pre_tokenizer.Metaspace: field 'replacement' is missing"),
    ({"type": "Metaspace", "replacement": "ab"}, "field 'replacement' must be one character"),
    ({"type": "Metaspace", "replacement": "_", "prepend_scheme": "sometimes"}, "field 'prepend_scheme' must be one of"),
    ({"type": "Metaspace", "replacement": "_", "add_prefix_space": False}, "field 'add_prefix_space' is false"),
    ({"type": "Metaspace", "replacement": "_", "split": "yes"}, "field 'split' must be true or false, got a string"),
    ({"type": "Split", "pattern": {"String": "a"}, "behavior": "Removed"},
     "pre_tokenizer.Split: field 'invert' is missing"),
    ({"type": "Split", "pattern": {"String": "a"}, "behavior": "removed", "invert": False},
     "field 'behavior' must be one of"),
    ({"type": "Split", "pattern": {"Regex": "(?<"}, "behavior": "Removed", "invert": False}, "not a valid regular"),
    ({"type": "Split", "pattern": ["a"], "behavior": "Removed", "invert": False}, "field 'pattern' must be an object"),
    ({"type": "ByteLevel", "add_prefix_space": False}, "pre_tokenizer.ByteLevel: field 'trim_offsets' is missing"),
    ({"type": "Digits"}, "pre_tokenizer.Digits: field 'individual_digits' is missing"),
    ({"type": "Punctuation", "behavior": None}, "field 'behavior' must be a string, got null"),
    ({"type": "CharDelimiterSplit", "delimiter": ""}, "field 'delimiter' must be one character"),
    ({"type": "Sequence", "pretokenizers": {}}, "pre_tokenizer.Sequence: field 'pretokenizers' must be a list"),
    ({"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": 0}]},
     "pre_tokenizer.Digits: field 'individual_digits' must be true or false, got an integer"),
]


@pytest.mark.parametrize("obj, message", BAD, ids=[m for _, m in BAD])
def test_bad_json_is_one_error_naming_component_and_field(obj, message):
    with pytest.raises(TokkitError, match=regex.escape(message)) as info:
        pre_tokenizer_from_json(obj, "t.json")
    assert str(info.value).startswith("t.json: ") and "\n" not in str(info.value)


# ------------------------------------------------------------------------------------ twins

@pytest.mark.parametrize("pre", PRE_TOKENIZERS, ids=IDS)
@SETTINGS
@given(text=TEXT)
def test_twin_gives_tokenizers_pieces_offsets_and_spans(pre, text):
    obj = as_json(pre)
    assert twin(obj, text) == expected(obj, text)


@pytest.mark.parametrize("text", HARD + ["".join(HARD), " " * 40 + "a" + " " * 40, "\r\n" * 5, "a" + "\n" * 30])
def test_hard_cases(text):
    for pre in PRE_TOKENIZERS:
        assert twin(as_json(pre), text) == expected(as_json(pre), text), pre


def test_metaspace_twin_is_pre_tokenize_because_split_is_a_field():
    m = Metaspace("▁", "always", False)
    assert m.split is False and m.pre_tokenize([aligned("a b")]) == [("▁a▁b", [(0, 1), (0, 1), (1, 2), (2, 3)])]


NORMALIZED = [
    ({"type": "Strip", "strip_left": True, "strip_right": True}, {"type": "Metaspace", "replacement": "▁",
                                                                   "prepend_scheme": "first", "split": True}),
    ({"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
      "lowercase": True}, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}),
    ({"type": "NFKC"}, as_json(hf.ByteLevel())),
    ({"type": "Replace", "pattern": {"Regex": "^"}, "content": "^"}, {"type": "Metaspace", "replacement": "^",
                                                                       "prepend_scheme": "first", "split": True}),
]


@pytest.mark.parametrize("norm, pre", NORMALIZED)
@SETTINGS
@given(text=TEXT)
def test_after_a_normalizer(norm, pre, text):
    """The normalized text is a slice starting where its first character's span does: Metaspace's
    "first" does not prepend after a normalizer removed the text's first characters."""
    tok = oracle(json.dumps(pre), json.dumps(norm))
    want = [tuple(o) for o in tok.encode(text).offsets]
    normalized = normalizer_from_json(norm, "t.json").normalize(aligned(text))
    pieces = pre_tokenizer_from_json(pre, "t.json").pre_tokenize([normalized])
    assert [span for _, s in pieces for span in s] == want


@SETTINGS
@given(parts=st.lists(TEXT.filter(lambda t: "<" not in t and ">" not in t), max_size=4))
def test_text_segments_between_added_tokens_keep_their_starts(parts):
    """Metaspace("first") prepends only to the segment that starts the text."""
    pre = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True}
    tok = oracle(json.dumps(pre), "null", "<x>")
    text = "<x>".join(parts)
    encoding = tok.encode(text)
    want = [tuple(o) for o, t in zip(encoding.offsets, encoding.tokens) if t != "<x>"]
    segments, at = [], 0
    for part in parts:
        segments.append(aligned(part, at))
        at += len(part) + 3
    pieces = pre_tokenizer_from_json(pre, "t.json").pre_tokenize(segments)
    assert [span for _, s in pieces for span in s] == want


def test_metaspace_first_prepends_where_the_original_text_starts():
    m = pre_tokenizer_from_json({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first",
                                 "split": False}, "t.json")
    assert m.pre_tokenize([aligned("ab"), aligned("cd", 2)]) == [("▁ab", [(0, 1), (0, 1), (1, 2)]),
                                                                 ("cd", [(2, 3), (3, 4)])]
    assert m.pre_tokenize([("ab", [(2, 3), (3, 4)])])[0][0] == "ab"  # "  ab" with its spaces stripped


@pytest.mark.parametrize("pattern", [r"a\Z", r"\Z", r"a\z", r"\n\Z", r"^a|a\Z", r"[\Z]"])
def test_end_anchors_as_oniguruma_reads_them(tmp_path, pattern):
    """Oniguruma's \\Z matches at the end and before a final newline, \\z at the end only: the
    compiled path's ids and offsets are tokenizers' on a file tokenizers built and saved."""
    vocab = {"[UNK]": 0, "a": 1, "b": 2, "\n": 3, "ba": 4, "ba\n": 5, "a\n": 6, "\n\n": 7, "Z": 8}
    built = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    built.pre_tokenizer = hf.Split(Regex(pattern), "isolated")
    built.save(str(tmp_path / "tokenizer.json"))
    tok = tokkit.load(tmp_path / "tokenizer.json")
    for text in ["ba\n", "ba", "ba\n\n", "a\nb", "ba\na\n", "\n", "a", "Z\n", ""]:
        want = built.encode(text)
        got = tok.encode_with_offsets(text)
        assert tok.encode(text) == got.ids == want.ids, text
        assert got.offsets == want.offsets, text
