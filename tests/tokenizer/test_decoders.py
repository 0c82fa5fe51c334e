"""The decoders against tokenizers' on the same JSON: the objects written back, and the lists each chain makes.

tokenizers' Python API only gives the joined text, so each decoder runs inside a Sequence that
marks its own spaces and then joins its list with single spaces (a WordPiece decoder whose prefix
never occurs): the text splits back into the exact list the decoder made.
"""
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models

from tokkit._native.byte_symbols import encode_symbols
from tokkit.errors import TokkitError
from tokkit.tokenizer.decoders import (ByteFallback, Fuse, Sequence, Strip, decode_tokens, decoder_from_json,
                                       decoder_to_json)

SPACE = "\U0010fffd"  # stands for a space inside a token while the list is joined with spaces
NEVER = "\U0010fffe"  # a WordPiece prefix no token has
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

LLAMA = {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                                          {"type": "ByteFallback"}, {"type": "Fuse"},
                                          {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
DECODERS = [
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": False},
    {"type": "Metaspace", "replacement": "_", "prepend_scheme": "first", "split": True},
    {"type": "ByteFallback"}, {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0}, {"type": "Strip", "content": "▁", "start": 3, "stop": 0},
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    {"type": "Replace", "pattern": {"String": "ab"}, "content": ""},
    {"type": "Replace", "pattern": {"String": ""}, "content": "-"},
    {"type": "Replace", "pattern": {"Regex": "x*"}, "content": "-"},
    {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": "_"},
    {"type": "Replace", "pattern": {"Regex": "(?<=a)b|^c"}, "content": "[$0]"},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    {"type": "WordPiece", "prefix": "##", "cleanup": True}, {"type": "WordPiece", "prefix": "##", "cleanup": False},
    {"type": "WordPiece", "prefix": "", "cleanup": True},
    {"type": "BPEDecoder", "suffix": "</w>"}, {"type": "BPEDecoder", "suffix": ""}, {"type": "BPEDecoder", "suffix": "a"},
    LLAMA, {"type": "Sequence", "decoders": [{"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False},
                                             {"type": "Sequence", "decoders": [{"type": "ByteFallback"}]}]},
    {"type": "Sequence", "decoders": []},
]


def oracle_decoder(obj: dict) -> Tokenizer:
    data = json.loads(Tokenizer(models.WordLevel({"x": 0}, unk_token="x")).to_str())
    data["decoder"] = obj
    return Tokenizer.from_str(json.dumps(data))


def marked(obj: dict) -> dict:
    """`obj`, then its list's own spaces marked, then the list joined with single spaces."""
    return {"type": "Sequence", "decoders": [obj, {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
                                             {"type": "WordPiece", "prefix": NEVER, "cleanup": False}]}


def oracle_chain(tok: Tokenizer, tokens: list[str]) -> list[str]:
    text = tok.decoder.decode(tokens)
    return [t.replace(SPACE, " ") for t in text.split(" ")] if text else []


@pytest.fixture(scope="module")
def pairs():
    return [(obj, decoder_from_json(obj, "t.json"), oracle_decoder(marked(obj)), oracle_decoder(obj))
            for obj in DECODERS]


def tokens():
    """Token lists mixing byte tokens (good and odd), GPT-2 symbols, markers, prefixes and any text."""
    text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=SPACE + NEVER), max_size=6)
    byte = st.integers(0, 255).map(lambda b: f"<0x{b:02X}>")
    odd_byte = st.sampled_from(["<0x+F>", "<0xab>", "<0x-1>", "<0x 1>", "<0xé>", "<0x4>", "<0x41", "<0x411>"])
    symbols = st.binary(max_size=4).map(encode_symbols)
    marks = st.lists(st.sampled_from(["▁", " ", "##", "</w>", "x", "a", "b", "c", "_", "'", "n't", " .", "do not"]),
                     max_size=4).map("".join)
    return st.lists(byte | odd_byte | symbols | marks | text, max_size=10)


@SETTINGS
@given(toks=tokens())
def test_decode_chain_matches_tokenizers(pairs, toks):
    for obj, ours, tok, plain in pairs:
        assert ours.decode_chain(list(toks)) == oracle_chain(tok, toks) or _both_empty(ours, tok, toks), obj
        assert decode_tokens(ours, toks) == plain.decoder.decode(toks), obj


def _both_empty(ours, tok, toks) -> bool:
    """An empty list and a list of one empty token join to the same text: either is right."""
    return "".join(ours.decode_chain(list(toks))) == "" and tok.decoder.decode(toks) == ""


@pytest.mark.parametrize("toks", [[], [""], ["<0xE2>", "<0x98>"], ["<0xF0>", "<0x9F>", "<0x98>", "<0x80>", "a"],
                                  ["<0xED>", "<0xA0>", "<0x80>"], ["<0xC0>", "<0x80>"], ["ĠĠ", "Ã", "©", "é", "Ã"],
                                  ["▁▁a▁", "▁", "▁b"], ["hel", "##lo", "do not", " 's", "'", "</w>", "a</w>b</w>"]])
def test_decode_hard_lists(pairs, toks):
    for obj, ours, tok, plain in pairs:
        assert decode_tokens(ours, toks) == plain.decoder.decode(toks), obj


def test_invalid_utf8_byte_tokens_give_one_replacement_each():
    assert ByteFallback().decode_chain(["<0xE2>", "<0x98>", "b", "<0xE2>", "<0x98>", "<0x83>"]) == ["�", "�", "b", "☃"]


@pytest.mark.parametrize("strip", [(" ", 1, 1), (" ", 0, 2), ("a", 2, 3), (" ", 3, 0)])
@pytest.mark.parametrize("tok", ["", " ", "  ", "   ", " x ", "aaa", "a", "xa"])
def test_strip_matches_tokenizers_or_gives_empty_where_it_panics(strip, tok):
    content, start, stop = strip
    obj = {"type": "Strip", "content": content, "start": start, "stop": stop}
    ours = Strip(content, start, stop).decode_chain([tok])
    try:
        theirs = oracle_decoder(obj).decoder.decode([tok])
    except BaseException:  # tokenizers' PanicException derives from BaseException
        assert ours == [""]
    else:
        assert ours == [theirs]


def test_round_trip_of_what_tokenizers_writes():
    for obj in DECODERS:
        written = json.loads(oracle_decoder(obj).to_str())["decoder"]
        assert json.dumps(decoder_to_json(decoder_from_json(written, "t.json"))) == json.dumps(written)
    assert decoder_from_json(None, "t.json") is None and decoder_to_json(None) is None


def test_old_and_partial_metaspace_objects_read_as_tokenizers_reads_them():
    for obj in ({"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
                {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False, "prepend_scheme": "never",
                 "str_rep": "▁"},
                {"type": "Metaspace", "replacement": "▁", "split": None}):
        written = json.loads(oracle_decoder(obj).to_str())["decoder"]
        assert decoder_to_json(decoder_from_json(obj, "t.json")) == written


BAD = [
    ({"type": "Metaspace", "replacement": "▁", "add_prefix_space": False}, "add_prefix_space"),
    ({"type": "Metaspace", "replacement": "ab"}, "one character"),
    ({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"}, "prepend_scheme"),
    ({"type": "Strip", "content": " ", "start": 1}, "'stop' is missing"),
    ({"type": "Strip", "content": " ", "start": -1, "stop": 0}, "start"),
    ({"type": "Replace", "pattern": {"Regex": "("}, "content": " "}, "not a valid regular expression"),
    ({"type": "Replace", "pattern": {"String": "a", "Regex": "b"}, "content": " "}, "pattern"),
    ({"type": "Replace", "pattern": "a", "content": " "}, "pattern"),
    ({"type": "ByteLevel"}, "add_prefix_space"), ({"type": "WordPiece", "prefix": "##"}, "cleanup"),
    ({"type": "BPEDecoder"}, "suffix"), ({"type": "CTC"}, "not supported"), ({"decoders": []}, "'type' is missing"),
    ({"type": "Sequence", "decoders": [None]}, "decoders[0]"), ({"type": "Sequence"}, "decoders"),
    ({"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Strip"}]}, "decoders[1]"), ([], "object"),
]


@pytest.mark.parametrize("obj,words", BAD)
def test_bad_json_is_one_error(obj, words):
    with pytest.raises(TokkitError, match=words.replace("[", r"\[").replace("]", r"\]")) as err:
        decoder_from_json(obj, "t.json")
    assert str(err.value).startswith("t.json: decoder") and "\n" not in str(err.value)


def test_sequence_of_decoders_is_a_plain_value():
    seq = Sequence((ByteFallback(), Fuse()))
    assert seq == decoder_from_json(seq.to_json(), "t.json") and hash(seq) == hash(Sequence((ByteFallback(), Fuse())))
