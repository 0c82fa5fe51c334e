"""Normalizer components against tokenizers: the JSON written back, the normalized text and its alignments.

The oracle's alignments come from a Tokenizer whose pre-tokenizer isolates every character and whose
WordLevel model knows only the unknown token: each token is one normalized character and its offsets
are that character's span in the input. Where tokenizers panics (a leading character inserted with an
empty span, then another normalizer), the twin must raise a TokkitError.
"""
import base64
import io
import json
import random
from functools import lru_cache

import numpy as np
import pytest
import regex
import sentencepiece as spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sentencepiece import sentencepiece_model_pb2
from tokenizers import Regex, Tokenizer, models
from tokenizers import normalizers as hf
from tokenizers import pre_tokenizers as hf_pre

from tokkit._native import unicode_tables as ut
from tokkit.errors import TokkitError
from tokkit.tokenizer import precompiled
from tokkit.tokenizer.aligned import aligned, unicode_data
from tokkit.tokenizer.normalizers import normalizer_from_json, normalizer_to_json

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# The code points the table sweeps check: planes 0-3 and 14 whole, one in 97 elsewhere (unassigned
# or private use there; dev/gen_unicode_tables.py checks every code point when it writes the tables).
SWEEP = [c for c in range(0x110000)
         if not 0xD800 <= c < 0xE000 and (c < 0x40000 or 0xE0000 <= c < 0xE1000 or c % 97 == 0)]
EACH_CHAR = hf_pre.Split(Regex(r"[\s\S]"), "isolated")

# Pieces that meet the hard cases: combining marks (in and out of canonical order), emoji ZWJ and
# flag sequences, Hangul jamo and syllables, CJK, CR LF, NBSP and other spaces, fullwidth and
# compatibility characters, controls, Indic conjuncts, final sigma, dotted capital I.
HARD = ["a", "B", "é", "e\u0301", "ｅ\u0301", "\u0316", "\u0301", "\u0345", "\u0f73", "\u0f71\u0f72", "ﬁ", "①",
        "İ", "Σ", "ς", "ǅ", "Å", "\u212b", " ", "  ", "    ", "\u00a0", "\u3000", "\t", "\n", "\r\n", "\r", "中",
        "文", "한", "\u1100\u1161\u11a8", "\uac00\u11a8", "👩\u200d👩\u200d👧", "🇫🇷🇩", "👍🏽",
        "\u00a9\u200d\u200d\u00a9", "\x00", "\x01", "\x7f", "\ufeff", "\u200b", "\ufffd", "Ａ", "ｶﾞ", "क्ष",
        "\u0915\u094d\u200d\u0924", "\u0600a", "x", "X", "1", "٣", "½", "▁", "\U0001d400", "\U00011f42",
        "\U0010fffd"]
TEXT = st.one_of(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
                 st.lists(st.sampled_from(HARD), max_size=8).map("".join))

RULES = {"ﬁ": "fi", "ｅ": "e", "ｅ\u0301": "é", "\x01": "", "Å": "A\u030a", "①": "1", "  ": " ", "中": "[zh]"}
SMALL_CHARSMAP = base64.b64encode(precompiled.build_charsmap(RULES)).decode()

NORMALIZERS = [
    hf.NFC(), hf.NFD(), hf.NFKC(), hf.NFKD(), hf.Lowercase(), hf.StripAccents(), hf.Nmt(),
    hf.Strip(), hf.Strip(left=True, right=False), hf.Strip(left=False, right=True),
    hf.Replace("a", "XY"), hf.Replace(" ", ""), hf.Replace(Regex(" {2,}"), " "), hf.Replace(Regex("^"), "S"),
    hf.Replace(Regex("x*"), "-"), hf.Replace(Regex(r"\s+$"), ""), hf.Replace(Regex(r"\p{L}+"), "<$0>"),
    hf.Prepend("▁"), hf.Prepend(""), hf.Prepend("ab"),
    hf.BertNormalizer(),
    hf.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False),
    hf.BertNormalizer(strip_accents=False), hf.Precompiled(base64.b64decode(SMALL_CHARSMAP)),
    hf.Sequence([hf.Prepend("▁"), hf.Replace(" ", "▁")]),
    hf.Sequence([hf.NFD(), hf.StripAccents(), hf.Lowercase()]),
    hf.Sequence([hf.Strip(), hf.Replace(Regex("^"), "Q"), hf.NFKC()]),
    hf.Sequence([hf.Replace(Regex(" +$"), ""), hf.Sequence([hf.Prepend("_"), hf.NFKD()])]),
]
IDS = [n.__getstate__().decode()[:60] for n in NORMALIZERS]


@lru_cache(maxsize=None)
def oracle(obj_json: str) -> Tokenizer:
    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.normalizer = hf_from_json(obj_json)
    tok.pre_tokenizer = EACH_CHAR
    return tok


def hf_from_json(obj_json: str):
    data = json.loads(Tokenizer(models.WordLevel({"x": 0}, unk_token="x")).to_str())
    data["normalizer"] = json.loads(obj_json)
    return Tokenizer.from_str(json.dumps(data)).normalizer


def expected(obj: dict, text: str):
    """tokenizers' (normalized text, per-character spans), or "fails" when it panics."""
    tok = oracle(json.dumps(obj))
    try:
        spans = [tuple(o) for o in tok.encode(text).offsets]
    except BaseException:  # a Rust panic is a BaseException in Python
        return "fails"
    return tok.normalizer.normalize_str(text), spans


def twin(obj: dict, text: str):
    try:
        return normalizer_from_json(obj, "t.json").normalize(aligned(text))
    except TokkitError:
        return "fails"


# ------------------------------------------------------------------------------------ JSON

@pytest.mark.parametrize("normalizer", NORMALIZERS, ids=IDS)
def test_json_written_back_as_tokenizers_writes_it(normalizer):
    obj = json.loads(normalizer.__getstate__())
    assert normalizer_to_json(normalizer_from_json(obj, "t.json")) == obj


@pytest.mark.parametrize("obj", [
    {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": False, "lowercase": True},
    {"type": "Sequence", "normalizers": []},
    {"type": "Precompiled", "precompiled_charsmap": SMALL_CHARSMAP},
])
def test_defaults_filled_as_tokenizers_fills_them(obj):
    written = json.loads(Tokenizer.from_str(json.dumps({**json.loads(Tokenizer(models.WordLevel(
        {"x": 0}, unk_token="x")).to_str()), "normalizer": obj})).to_str())["normalizer"]
    assert normalizer_to_json(normalizer_from_json(obj, "t.json")) == written
    assert normalizer_from_json(None, "t.json") is None and normalizer_to_json(None) is None


BAD = [
    ({"type": "Foo"}, "normalizer type 'Foo' is not supported"),
    ([], "normalizer must be an object, got a list"),
    ({"type": "NFC", "x": 1}, "normalizer.NFC: unknown field 'x'"),
    ({"type": "Strip", "strip_left": True}, "normalizer.Strip: field 'strip_right' is missing"),
    ({"type": "Strip", "strip_left": 1, "strip_right": True},
     "field 'strip_left' must be true or false, got an integer"),
    ({"type": "Replace", "pattern": "a", "content": "b"}, "normalizer.Replace: field 'pattern' must be"),
    ({"type": "Replace", "pattern": {"String": "a", "Regex": "b"}, "content": "b"}, "field 'pattern' must be"),
    ({"type": "Replace", "pattern": {"Regex": "("}, "content": "b"}, "field 'pattern' is not a valid regular"),
    ({"type": "Replace", "pattern": {"String": "a"}, "content": 3},
     "field 'content' must be a string, got an integer"),
    ({"type": "Prepend", "prepend": None}, "normalizer.Prepend: field 'prepend' must be a string, got null"),
    ({"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "lowercase": "yes"},
     "normalizer.BertNormalizer: field 'lowercase' must be true or false"),
    ({"type": "Precompiled", "precompiled_charsmap": "!!"},
     "normalizer.Precompiled: field 'precompiled_charsmap' is not base64"),
    ({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(b"\x08\0\0\0").decode()},
     "the trie needs 8 bytes"),
    ({"type": "Precompiled"}, "normalizer.Precompiled: field 'precompiled_charsmap' is missing"),
    ({"type": "Sequence"}, "normalizer.Sequence: field 'normalizers' is missing"),
    ({"type": "Sequence", "normalizers": [{"type": "NFC"}, 3]}, "normalizer must be an object, got an integer"),
    ({"type": "Sequence", "normalizers": [{"type": "Lowercase", "a": 1}]}, "normalizer.Lowercase: unknown field 'a'"),
]


@pytest.mark.parametrize("obj, message", BAD, ids=[m for _, m in BAD])
def test_bad_json_is_one_error_naming_component_and_field(obj, message):
    with pytest.raises(TokkitError, match=regex.escape(message)) as info:
        normalizer_from_json(obj, "t.json")
    assert str(info.value).startswith("t.json: ") and "\n" not in str(info.value)


# ------------------------------------------------------------------------------------ twins

@pytest.mark.parametrize("normalizer", NORMALIZERS, ids=IDS)
@SETTINGS
@given(text=TEXT)
def test_twin_gives_tokenizers_text_and_alignments(normalizer, text):
    obj = json.loads(normalizer.__getstate__())
    assert twin(obj, text) == expected(obj, text)


@pytest.mark.parametrize("text", HARD + ["".join(HARD), " " * 40 + "a" + " " * 40, "\r\n" * 5])
def test_hard_cases(text):
    for normalizer in NORMALIZERS:
        obj = json.loads(normalizer.__getstate__())
        assert twin(obj, text) == expected(obj, text), obj


def test_tokenizers_quirks_the_twins_keep():
    nfc = {"type": "NFC"}
    assert twin(nfc, "e\u0301x") == ("\u00e9x", [(0, 1), (2, 3)])  # the composite keeps the starter's span only
    assert twin({"type": "Prepend", "prepend": ""}, "ab") == ("ab", [(0, 0), (1, 2)])  # an empty span at the start
    seq = {"type": "Sequence", "normalizers": [{"type": "Replace", "pattern": {"Regex": "^"}, "content": "S"},
                                                {"type": "Lowercase"}]}
    assert twin(seq, "ab") == expected(seq, "ab") == "fails"  # tokenizers panics: the twin refuses
    pc = {"type": "Precompiled", "precompiled_charsmap": SMALL_CHARSMAP}
    # a removed first character hands its span to the next: the removal is charged to nothing
    assert twin(pc, "\x01ab") == expected(pc, "\x01ab") == ("ab", [(0, 1), (1, 2)])
    # the SHORTEST key wins and replaces the whole small cluster: the accent goes with it
    assert twin(pc, "ｅ\u0301") == expected(pc, "ｅ\u0301") == ("e", [(0, 1)])
    # a cluster of 6 bytes or more goes character by character
    assert twin(pc, "ｅ\u0301\u0301")[0] == expected(pc, "ｅ\u0301\u0301")[0] == "e\u0301\u0301"


def test_segment_origin_is_kept_by_a_sequence():
    seq = normalizer_from_json({"type": "Sequence", "normalizers": [
        {"type": "Strip", "strip_left": True, "strip_right": False},
        {"type": "Replace", "pattern": {"Regex": "^"}, "content": "^"}]}, "t.json")
    # a text segment starting at 10: the inserted character takes the segment's start, not the
    # start of the first character left after stripping
    assert seq.normalize(aligned("  ab", 10)) == ("^ab", [(10, 10), (12, 13), (13, 14)])


# ------------------------------------------------------------------------------------ tables

def sweep(separator: str = "\n") -> tuple[str, list[int]]:
    chars = [c for c in SWEEP if chr(c) != separator]
    return separator.join(map(chr, chars)), chars


def piece_starts(pieces, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(covered, alone): which characters some piece holds, and which start a one-character piece."""
    offsets = np.array([o for _, o in pieces], dtype=np.int64).reshape(-1, 2)
    covered = np.zeros(n + 1, dtype=np.int64)
    np.add.at(covered, offsets[:, 0], 1)
    np.add.at(covered, offsets[:, 1], -1)
    alone = np.zeros(n, dtype=bool)
    alone[offsets[:, 0][offsets[:, 1] - offsets[:, 0] == 1]] = True
    return np.cumsum(covered)[:n] > 0, alone


def test_character_maps_are_tokenizers_for_every_code_point():
    text, chars = sweep()
    d = unicode_data()
    for table, normalizer in ((d.nfd, hf.NFD()), (d.nfkd, hf.NFKD()), (d.lower, hf.Lowercase())):
        got = normalizer.normalize_str(text).split("\n")
        assert got == [table.get(c, chr(c)) for c in chars]


def test_character_classes_are_tokenizers_for_every_code_point():
    flags = unicode_data().flags
    text, chars = sweep("a")
    at = np.arange(len(chars)) * 2  # each character sits between two "a"
    codes = np.array(chars)
    for pre, bit in ((hf_pre.WhitespaceSplit(), ut.WHITESPACE), (hf_pre.Punctuation("removed"), ut.PUNCT)):
        covered, _ = piece_starts(pre.pre_tokenize_str(text), len(text))
        assert np.array_equal(~covered[at], (flags[codes] & bit) != 0)
    _, alone = piece_starts(hf_pre.Digits(individual_digits=True).pre_tokenize_str(text), len(text))
    assert np.array_equal(alone[at], (flags[codes] & ut.NUMERIC) != 0)
    text, chars = sweep()
    stripped = np.array([s == "" for s in hf.StripAccents().normalize_str(text).split("\n")])
    assert np.array_equal(stripped, (flags[np.array(chars)] & ut.STRIP_ACCENT) != 0)


def test_word_class_is_the_whitespace_pre_tokenizers():
    flags = unicode_data().flags
    text, chars = sweep("!")  # "!" is neither word nor space: a word character stands alone between two
    _, alone = piece_starts(hf_pre.Whitespace().pre_tokenize_str(text), len(text))
    at = np.arange(len(chars)) * 2
    assert np.array_equal(alone[at], (flags[np.array(chars)] & ut.WORD) != 0)


def test_norm_tables_layout():
    t = ut.norm_tables()
    assert t["flags"].dtype == np.uint16 and t["flags"].shape == (0x110000,)
    assert t["grapheme"].dtype == np.uint16 and t["grapheme"].shape == (0x110000,)
    assert t["nfkd_index"].dtype == np.uint32 and t["nfkd_pool"][0] == 0
    k = t["nfkd_index"][0xFDFA]  # the longest NFKD result, 18 characters
    assert t["nfkd_pool"][k] == 18
    keys = t["compose_keys"]
    assert keys.dtype == np.uint64 and np.all(keys[1:] > keys[:-1])
    i = np.searchsorted(keys, np.uint64(ord("e") << 21 | 0x301))
    assert t["compose_values"][i] == ord("é")
    assert t["flags"][ord(" ")] == ut.WHITESPACE | ut.REGEX_SPACE and t["grapheme"][0x1F1E6] & 31 == 6


# ------------------------------------------------------------------------------------ Precompiled

def train_charsmap(rule: str) -> bytes:
    """A precompiled_charsmap as the Hub's SentencePiece models carry it: train a tiny model."""
    rng = random.Random(0)
    alphabet = "abcdefghij klmnop" + "éüßÅｅＡＢ①ﬁ中文한국ｶﾞ\u00a0\u3000"
    lines = ["".join(rng.choice(alphabet) for _ in range(40)) for _ in range(300)]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, vocab_size=60,
                                   normalization_rule_name=rule, minloglevel=2)
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    return proto.normalizer_spec.precompiled_charsmap


@pytest.fixture(scope="module", params=["nmt_nfkc", "nmt_nfkc_cf"])
def trained(request):
    return {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(train_charsmap(request.param)).decode()}


@SETTINGS
@given(text=TEXT)
def test_trained_charsmaps_normalize_as_tokenizers(trained, text):
    assert twin(trained, text) == expected(trained, text)


def test_trained_charsmap_json(trained):
    blob = base64.b64decode(trained["precompiled_charsmap"])
    written = json.loads(hf.Precompiled(blob).__getstate__())
    assert normalizer_to_json(normalizer_from_json(trained, "t.json")) == written


# Every first byte rewritten (to strings of 0 to 3 characters): a cluster under 6 bytes becomes one
# replacement, a longer one one per character, so the output shows the grapheme clusters.
BYTE_CHARSMAP = {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(precompiled.build_charsmap(
    {bytes([b]): ["", "x", "yz", "uvw"][b % 4] for b in range(1, 256)})).decode()}
CLASSES = ["a", "\r", "\n", "\x01", "\u0300", "\u200d", "\U0001F1E6", "\U0001F1E7", "\u0600", "\u0903", "\u1100",
           "\u1161", "\u11a8", "\uac00", "\uac01", "\u00a9", "\U0001F600", "\u0915", "\u094d", "\u093f", "\U00011f42",
           "\U00010a00", "\u0d4d", "\U000e0020", "\U000e0001"]


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(CLASSES), max_size=9).map("".join))
def test_grapheme_clusters_are_tokenizers(text):
    # tokenizers is the reference; `regex`'s \X follows its own Unicode version (its GB9c rule for a
    # linker with no consonant before it differs between releases), so it is no oracle here
    assert twin(BYTE_CHARSMAP, text) == expected(BYTE_CHARSMAP, text)


@SETTINGS
@given(text=TEXT)
def test_grapheme_clusters_on_any_text(text):
    assert twin(BYTE_CHARSMAP, text) == expected(BYTE_CHARSMAP, text)


def units_blob(units: list[int], pool: bytes) -> bytes:
    return (4 * len(units)).to_bytes(4, "little") + np.array(units, dtype="<u4").tobytes() + pool


def single_key_units(key_byte: int, value: int, child_offset: int | None = None) -> list[int]:
    """Root (base 256), one child for `key_byte` whose value unit sits at 512 + key_byte."""
    units = [0] * 768
    units[0] = 256 << 10
    pos = 256 ^ key_byte
    base = 512 + key_byte if child_offset is None else pos ^ child_offset
    units[pos] = ((pos ^ base) << 10) | 0x100 | key_byte
    if base < len(units):
        units[base] = 0x80000000 | value
    return units


MALFORMED = [
    (b"", "not even a trie size"),
    (b"\x08\x00\x00\x00\x01\x00\x00\x00", "the trie needs 8 bytes"),
    (b"\x00\x00\x00\x00abc\x00", "the trie is empty"),
    (units_blob(single_key_units(ord("a"), 0), b"\xff\x00"), "the replacement pool is not UTF-8"),
    (units_blob([(1 << 20) << 10] + [0] * 255, b""), "children lie outside the trie"),
    (units_blob(single_key_units(ord("a"), 0, child_offset=1 << 20), b"x\x00"), "children lie outside the trie"),
    (units_blob(single_key_units(ord("a"), 5), b"x\x00"), "points outside the replacement pool"),
    (units_blob(single_key_units(ord("a"), 1), "é\0".encode()), "points outside the replacement pool's characters"),
]


@pytest.mark.parametrize("blob, message", MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_charsmap_is_one_error(blob, message):
    with pytest.raises(TokkitError, match=regex.escape(message)):
        precompiled.parse_charsmap(blob)
    obj = {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode()}
    with pytest.raises(TokkitError, match="t.json: normalizer.Precompiled: field 'precompiled_charsmap'"):
        normalizer_from_json(obj, "t.json")


def test_a_trie_with_a_cycle_is_walked_once_per_byte():
    units = single_key_units(ord("a"), 0, child_offset=(256 ^ ord("a")) ^ 256)  # back among the root's children
    units[256] = 0x80000000  # the value unit of that node (it is its own base)
    blob = units_blob(units, b"x\x00")
    cm = precompiled.parse_charsmap(blob)
    assert precompiled.common_prefix_search(cm.trie, b"a" * 1000) == [0] * 1000
    obj = {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode()}
    for text in ("aaaa", "bab", "a\u0301a"):
        assert twin(obj, text) == expected(obj, text)


def test_builder_gives_darts_clone_tries_tokenizers_reads():
    rules = {"a": "1", "ab": "2", "abc": "3", "b": "", "é": "e", "中文": "zh"}
    cm = precompiled.parse_charsmap(precompiled.build_charsmap(rules))
    assert [precompiled.transform(cm, k) for k in rules] == ["1", "1", "1", "", "e", "zh"]
    assert precompiled.transform(cm, "c") is None
    with pytest.raises(TokkitError):
        precompiled.build_charsmap({"a\0": "x"})
