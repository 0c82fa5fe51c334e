"""The general compiled path splits the cl100k (Llama 3), qwen2 and o200k patterns with its own
scanners (pattern_scan.hpp), and runs files with them through its fast lane: both against tokenizers.

The files are Hub-like ones that the byte-level fast path does not take (an NFKC or Lowercase
normalizer in front of the byte-level BPE) and Unigram, WordPiece and WordLevel models behind a
family's Split, trained by `tokenizers` itself on the shared test text.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import test_pre_tokenizers as pre_cases
import tokenizers
from helpers.hub_files import _bpe_trainer, _trained, texts
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, trainers

import tokkit
from tokkit._native.patterns import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN, QWEN2_PATTERN
from tokkit._native.pipeline import PipelineEncoder
from tokkit._native.pipeline_tables import pipeline_tables
from tokkit.tokenizer.hf_json import spec_from_json
from tokkit.tokenizer.encoders import general_encoder, native

FAMILIES = {"cl100k": CL100K_PATTERN, "qwen2": QWEN2_PATTERN, "o200k": O200K_PATTERN}
WORDLEVEL = {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}

# Where the families' alternatives differ: contractions in any case (and the long s U+017F, which
# (?i:s) matches), o200k's case runs, marks before capitals, newlines after punctuation and "/",
# runs of spaces before letters, digits, marks and the end, long digit runs, CR LF, scripts, emoji.
HARD = ["DON'T", "He'S", "I'M", "they'RE", "we'Ve", "it'LL", "Ok'D", "x'\u017f", "'\u017f", "\u017f's", "'s'S",
        "HelloWorld", "camelCaseWORDS", "ABCdef", "\u01c5emal \u01c8", "\u0301ABC", "e\u0301 \u0301 a", "a\u0301B",
        "\u03a3\u0391\u03a3 \u03c3\u03b1\u03c2", "\u0130stanbul Stra\u00dfe", "a.\n/b", "x!\r\n/\r\ny", "//\n\n",
        "a\r\n\r\n  b\r\n", "x  \r\n y", "\n\n\n   \t\n", "a \n b", " " * 30 + "a", "a" + " " * 30, "a \t  b",
        "1234567890123", "12 345 6789", " 1 22 333 4444", "\u0663\u0663\u0663\u0663", "\u00bd\u00bd", "x1y22z",
        "Hello \u043c\u0438\u0440 \u4e16\u754c \u0645\u0631\u062d\u0628\u0627", "\U0001f44d\U0001f3fd  \U0001f44d\U0001f3fd x",
        "\u00a0\u00a0a", "\u3000\u6f22\u5b57", "tab\t\tx", "  leading", "trailing  ", "", " ", "'", "''s",
        "don't DON'T Don'T I'd WE'LL", "$100,000.00 (approx.)", "e.g. \"quoted\" -- dash"]
PIECES = ["a", "Word", "WORD", "na\u00efve", "e\u0301", " ", "  ", "   ", "\t", "\n", "\r\n", "\u00a0", "\u0301",
          "\u0600", "\U0001f44d\U0001f3fd", "\u4e2d\u6587", "12345", "'s", "'S", "'\u017f", ".", ",", "/", "\u200b",
          "\ufb01", "x" * 12, "\u01c5", "A\u0301b"]
SPACED = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


def family_split(pattern: str, behavior: str = "isolated", invert: bool = False):
    return pre_tokenizers.Split(Regex(pattern), behavior=behavior, invert=invert)


# ------------------------------------------------------------------------------ Hub-like files
def build_llama3_nfkc(folder):
    """Llama 3's Split + ByteLevel(use_regex=false) BPE with ignore_merges, behind an NFKC normalizer."""
    tok = tokenizers.Tokenizer(models.BPE(ignore_merges=True))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([family_split(CL100K_PATTERN),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    return _trained(folder, tok, _bpe_trainer(["<|begin_of_text|>", "<|end_of_text|>"]))


def build_qwen2_lower(folder):
    """Qwen2's Split + ByteLevel BPE behind NFC and Lowercase (an uncased variant)."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([family_split(QWEN2_PATTERN),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    return _trained(folder, tok, _bpe_trainer(["<|endoftext|>", "<|im_start|>", "<|im_end|>"]))


def build_unigram_o200k(folder):
    """A Unigram model behind NFKC, o200k's Split and a Metaspace (prepended to the first piece only)."""
    tok = tokenizers.Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([family_split(O200K_PATTERN),
                                                 pre_tokenizers.Metaspace(prepend_scheme="first")])
    tok.decoder = decoders.Metaspace(prepend_scheme="first")
    trainer = trainers.UnigramTrainer(vocab_size=6000, special_tokens=["<unk>", "<s>", "</s>"], unk_token="<unk>",
                                      show_progress=False)
    _trained(folder, tok, trainer)
    # Scores as multiples of 2**-16, which every JSON reader parses exactly: tokenizers' reader may put
    # a long decimal one unit in the last place off Python's, and ties (runs of "-") then break apart.
    path = folder / "tokenizer.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["model"]["vocab"] = [[t, round(score * 65536) / 65536] for t, score in data["model"]["vocab"]]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return folder


def build_wordpiece_qwen2(folder):
    """WordPiece behind NFD, accent stripping and lowercasing, qwen2's Split then WhitespaceSplit. The
    fast lane is on: where stripping a mark after a tab leaves white space before a chunk's spaces,
    the lane sees that chunk's end and gives the rest of the text whole."""
    tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([family_split(QWEN2_PATTERN), pre_tokenizers.WhitespaceSplit()])
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=1500, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"],
                                        show_progress=False)
    return _trained(folder, tok, trainer)


def build_wordlevel_cl100k(folder):
    """WordLevel over Lowercase and the cl100k pieces (spaces stay in the words: " the")."""
    tok = tokenizers.Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = family_split(CL100K_PATTERN)
    trainer = trainers.WordLevelTrainer(vocab_size=3000, special_tokens=["[UNK]", "[CLS]", "[SEP]"],
                                        show_progress=False)
    return _trained(folder, tok, trainer)


# file -> (builder, whether the fast lane is on)
FILES = {"llama3-nfkc": (build_llama3_nfkc, True), "qwen2-lower": (build_qwen2_lower, True),
         "unigram-o200k": (build_unigram_o200k, True), "wordpiece-qwen2": (build_wordpiece_qwen2, True),
         "wordlevel-cl100k": (build_wordlevel_cl100k, True)}


@pytest.fixture(scope="module", params=sorted(FILES))
def hub_file(request, tmp_path_factory):
    builder, lane = FILES[request.param]
    folder = builder(tmp_path_factory.mktemp(request.param))
    return tokkit.load(folder), tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")), lane


def assert_equal(tok, hf, text):
    enc = hf.encode(text, add_special_tokens=False)
    ours = tok.encode_with_offsets(text)
    assert (ours.ids, ours.offsets, ours.word_ids) == (enc.ids, enc.offsets, enc.word_ids), repr(text)
    assert tok.encode(text) == enc.ids, repr(text)  # the fast lane where it is on


def test_files_run_on_the_general_path_with_the_expected_lane(hub_file):
    tok, _, lane = hub_file
    assert isinstance(tok._encoder, PipelineEncoder)
    assert tok._encoder.fast_lane is lane


def test_hard_texts_equal_tokenizers(hub_file):
    tok, hf, _ = hub_file
    cases = HARD + texts() + ["".join(HARD), " ".join(HARD), "  ".join(texts())]
    for text in cases:
        assert_equal(tok, hf, text)
    want = [e.ids for e in hf.encode_batch(cases, add_special_tokens=False)]
    assert tok.encode_batch(cases) == want  # the memos warm
    tok._encoder.clear_memos()
    assert tok.encode_batch(cases[::-1]) == want[::-1]  # cold, in another order
    ids, offsets = tok.encode_batch_flat(cases, num_threads=1)
    assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want


@settings(max_examples=120, deadline=None)
@given(text=SPACED)
@example(text="a\u0301  B")
@example(text="WORD  'S 12345  \r\n  x")
def test_chunked_texts_equal_tokenizers(hub_file, text):
    tok, hf, _ = hub_file
    assert_equal(tok, hf, text)
    assert_equal(tok, hf, text + " " + text)


# ------------------------------------------------------------------------------ the Split step alone
def compiled(pre_tokenizer, normalizer=None, python=False, model=WORDLEVEL) -> PipelineEncoder:
    """The general path for the components of these JSON objects; unless `python`, no step may call
    back into Python for a regex."""
    spec = spec_from_json({"normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "model": model}, "t.json")
    steps = native(spec.pipeline.normalizer) + native(spec.pipeline.pre_tokenizer)
    if not python and any("finder" in step for step in steps):
        raise AssertionError(f"{pre_tokenizer} went to the Python regex path")
    return general_encoder(spec, False)


BEHAVIORS = [("isolated", False), ("isolated", True), ("removed", False), ("removed", True),
             ("merged_with_previous", False), ("merged_with_next", True), ("contiguous", False)]
SPLITS = [family_split(p, b, i) for p in FAMILIES.values() for b, i in BEHAVIORS]
SPLIT_IDS = [f"{name}-{b}-{i}" for name in FAMILIES for b, i in BEHAVIORS]


def pieces(obj: dict, text: str):
    found = compiled(obj).inspect(text)
    spans = [tuple(s) for _, piece_spans in found for s in piece_spans]
    return [(p, (s[0][0], s[-1][1])) for p, s in found], spans


@pytest.mark.parametrize("split", SPLITS, ids=SPLIT_IDS)
@settings(max_examples=60, deadline=None)
@given(text=st.one_of(pre_cases.TEXT, SPACED, st.lists(st.sampled_from(HARD), max_size=4).map("".join)))
def test_every_behavior_gives_tokenizers_pieces(split, text):
    obj = pre_cases.as_json(split)
    assert pieces(obj, text) == pre_cases.expected(obj, text)


@pytest.mark.parametrize("split", SPLITS, ids=SPLIT_IDS)
def test_every_behavior_on_hard_texts(split):
    obj = pre_cases.as_json(split)
    for text in HARD + ["".join(HARD)]:
        assert pieces(obj, text) == pre_cases.expected(obj, text), repr(text)


def test_other_patterns_still_go_to_the_python_path():
    near = {"type": "Split", "pattern": {"Regex": CL100K_PATTERN + "|x"}, "behavior": "Isolated", "invert": False}
    with pytest.raises(AssertionError, match="Python regex path"):
        compiled(near)


# ------------------------------------------------------------------------------ where the lane stays off
def lane_of(pre, normalizer=None) -> bool:
    return compiled(pre, normalizer, python=True).fast_lane


@pytest.mark.parametrize("pattern", list(FAMILIES.values()) + [GPT2_PATTERN], ids=list(FAMILIES) + ["gpt2"])
def test_lane_is_on_for_an_isolated_split_only(pattern):
    assert lane_of(pre_cases.as_json(family_split(pattern)))
    assert lane_of(pre_cases.as_json(family_split(pattern)), {"type": "NFKC"})
    assert not lane_of(pre_cases.as_json(family_split(pattern, "merged_with_previous")))
    assert not lane_of(pre_cases.as_json(family_split(pattern, "isolated", True)))


def _hf_pieces(tok, text: str) -> list[str]:
    return [p for p, _ in tok.pre_tokenizer.pre_tokenize_str(tok.normalizer.normalize_str(text)
                                                             if tok.normalizer else text)]


# (normalizer, pre-tokenizer, text, cut, lane): where the char before a chunk's spaces can become
# white space, or the spaces something else, tokenizers' pieces of the whole text are not those of
# its chunks. A normalizer that makes a chunk end in white space keeps the lane on: the lane sees
# that end and gives the rest of the text whole. Spaces something else turn the lane off.
BLANKED = [
    (normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents()]), None, "a\t\u0301  b", 3, True),
    (normalizers.Replace("x", ""), None, "a\tx  b", 3, True),
    (normalizers.Replace("x", "\t"), None, "ax  b", 2, True),
    (None, [pre_tokenizers.Metaspace(prepend_scheme="never", split=False)], "a.  b", 2, False),
    (None, [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)], "AB CD", 2, False),
]


@pytest.mark.parametrize("pattern", list(FAMILIES.values()) + [GPT2_PATTERN], ids=list(FAMILIES) + ["gpt2"])
@pytest.mark.parametrize("normalizer,before,text,cut,lane", BLANKED, ids=[str(k) for k in range(len(BLANKED))])
def test_the_lane_gives_the_whole_texts_ids_where_chunks_would_split_otherwise(pattern, normalizer, before, text, cut,
                                                                              lane):
    steps = (before or []) + [family_split(pattern)]
    hf = tokenizers.Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    if normalizer is not None:
        hf.normalizer = normalizer
    hf.pre_tokenizer = pre_tokenizers.Sequence(steps)
    whole, parts = _hf_pieces(hf, text), _hf_pieces(hf, text[:cut]) + _hf_pieces(hf, text[cut:])
    assert whole != parts  # the witness: chunks would give other pieces
    data = json.loads(hf.to_str())
    assert lane_of(data["pre_tokenizer"], data["normalizer"]) is lane
    # a vocabulary of those pieces: the ids tell them apart, and tokkit gives the whole text's
    vocab = {"[UNK]": 0, **{p: k + 1 for k, p in enumerate(dict.fromkeys(whole + parts))}}
    data["model"]["vocab"] = vocab
    hf = tokenizers.Tokenizer.from_str(json.dumps(data))
    encoder = compiled(data["pre_tokenizer"], data["normalizer"], python=True, model=data["model"])
    for twice in (text, text, text + " " + text):  # the second time from the memo of chunks
        assert encoder.encode(twice) == hf.encode(twice).ids


@pytest.mark.slow
@pytest.mark.parametrize("form", ["NFD", "NFKD", "NFC", "NFKC", "Lowercase"])
def test_forms_and_lowercase_keep_every_char_ending_in_no_white_space(form):
    """Why these normalizers never send a text whole off the lane (Pipeline::encode_chunks): a char
    that is no white space never becomes nothing, nor text ending in white space, with the compiled
    tables; each char is followed by a space, which nothing joins."""
    flags, pages = pipeline_tables()["flags"]
    cps = np.arange(0x110000)
    white = (pages[flags[cps >> 8].astype(np.int64) * 256 + (cps & 255)] & 1) != 0
    solid = [c for c in range(0x110000) if not white[c] and not 0xD800 <= c < 0xE000]
    encoder = compiled(None, {"type": form})
    for a in range(0, len(solid), 1 << 16):
        block = solid[a:a + (1 << 16)]
        (out, spans), = encoder.inspect("".join(chr(c) + " " for c in block), pre_tokenize=False)
        last = {start: ch for ch, (start, _) in zip(out, spans) if start % 2 == 0}  # each char's last image
        assert [hex(c) for k, c in enumerate(block) if 2 * k not in last or white[ord(last[2 * k])]] == []
