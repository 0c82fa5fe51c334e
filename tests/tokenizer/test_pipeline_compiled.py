"""The general compiled encode path against tokenizers: every normalizer and pre-tokenizer alone,
by hypothesis over all code points and on hard cases, then whole pipelines.

The oracles (tokenizers objects, the hypothesis strategies, the hard cases) are the ones the twins'
tests use: test_normalizers.py and test_pre_tokenizers.py beside this file.
"""
from __future__ import annotations

import json

import pytest
import test_normalizers as norm_cases
import test_pre_tokenizers as pre_cases
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tokkit._native.pipeline import PipelineEncoder
from tokkit.errors import TokkitError
from tokkit.tokenizer.hf_json import spec_from_json
from tokkit.tokenizer.plan import plan
from tokkit.tokenizer.encoders import general_encoder

WORDLEVEL = {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}
SETTINGS = settings(max_examples=80, deadline=None)


def compiled(normalizer=None, pre_tokenizer=None) -> PipelineEncoder:
    """The general path for the components of these JSON objects (and a WordLevel of [UNK] alone)."""
    doc = {"normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "model": WORDLEVEL}
    return general_encoder(spec_from_json(doc, "t.json"), False)


def reference(obj: dict, text: str):
    """tokenizers' (text, spans), or "fails" where it panics (it has no answer there; an empty match
    inserted before NFKC makes its own alignments inconsistent, for one)."""
    if norm_cases.twin(obj, text) == "fails":  # the twin refuses where tokenizers' alignments break
        return "fails"
    if _empty_match_then_form(obj):
        # A char inserted at an empty match before a Unicode form puts tokenizers' alignments out of
        # step, and the form then writes some chars twice ("é" -> "QQé"): a bug not reproduced here.
        return "fails"
    try:
        return norm_cases.expected(obj, text)
    except BaseException:  # a Rust panic is a BaseException in Python
        return "fails"


def _empty_match_then_form(obj: dict) -> bool:
    steps = obj.get("normalizers", [obj])
    flat = [t for s in steps for t in s.get("normalizers", [s])]
    kinds = [(s["type"], s.get("pattern", {}).get("Regex")) for s in flat]
    empty = [k for k, (t, r) in enumerate(kinds) if t == "Replace" and r is not None and __import__("regex").match(r, "")]
    return bool(empty) and any(t in ("NFC", "NFD", "NFKC", "NFKD") for t, _ in kinds[empty[0]:])


def normalized(obj: dict, text: str):
    """The compiled normalizer's (text, spans), in the form test_normalizers.expected gives."""
    try:
        (out, spans), = compiled(normalizer=obj).inspect(text, pre_tokenize=False)
    except TokkitError:
        return "fails"
    return out, [tuple(s) for s in spans]


@pytest.mark.parametrize("normalizer", norm_cases.NORMALIZERS, ids=norm_cases.IDS)
@SETTINGS
@given(text=norm_cases.TEXT)
def test_each_normalizer_gives_tokenizers_text_and_alignments(normalizer, text):
    obj = json.loads(normalizer.__getstate__())
    want = reference(obj, text)
    if want != "fails":
        assert normalized(obj, text) == want


@pytest.mark.parametrize("text", norm_cases.HARD + ["".join(norm_cases.HARD)])
def test_normalizer_hard_cases(text):
    for normalizer in norm_cases.NORMALIZERS:
        obj = json.loads(normalizer.__getstate__())
        want = reference(obj, text)
        if want != "fails":
            assert normalized(obj, text) == want, obj


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(norm_cases.CLASSES), max_size=9).map("".join))
@example(text="\u00a9\u200d\u200d\u00a9\u0300")  # one ZWJ only joins an emoji to the next
@example(text="\u094d\u0915")  # a linker with no consonant before it
def test_precompiled_walks_grapheme_clusters_as_tokenizers(text):
    obj = norm_cases.BYTE_CHARSMAP
    assert normalized(obj, text) == norm_cases.expected(obj, text)


@pytest.fixture(scope="module", params=["nmt_nfkc", "nmt_nfkc_cf"])
def trained(request):
    import base64
    return {"type": "Precompiled",
            "precompiled_charsmap": base64.b64encode(norm_cases.train_charsmap(request.param)).decode()}


@SETTINGS
@given(text=norm_cases.TEXT)
def test_trained_charsmaps_normalize_as_tokenizers(trained, text):
    assert normalized(trained, text) == norm_cases.expected(trained, text)


def pre_tokenized(obj: dict, text: str):
    """The compiled pre-tokenizer's pieces with offsets, and every char's span (as pre_cases.expected)."""
    pieces = compiled(pre_tokenizer=obj).inspect(text)
    spans = [tuple(s) for _, piece_spans in pieces for s in piece_spans]
    return [(p, (s[0][0], s[-1][1])) for p, s in pieces], spans


@pytest.mark.parametrize("pre", pre_cases.PRE_TOKENIZERS, ids=pre_cases.IDS)
@SETTINGS
@given(text=pre_cases.TEXT)
def test_each_pre_tokenizer_gives_tokenizers_pieces_offsets_and_spans(pre, text):
    obj = pre_cases.as_json(pre)
    assert pre_tokenized(obj, text) == pre_cases.expected(obj, text)


@pytest.mark.parametrize("text", pre_cases.HARD + ["".join(pre_cases.HARD), " " * 40 + "a" + " " * 40, "\r\n" * 5])
def test_pre_tokenizer_hard_cases(text):
    for pre in pre_cases.PRE_TOKENIZERS:
        obj = pre_cases.as_json(pre)
        assert pre_tokenized(obj, text) == pre_cases.expected(obj, text), obj


# ------------------------------------------------------------------------------------ the fast lane
# Texts where chunks meet everything that could cross them: runs of spaces before marks, emoji and
# other whitespace, added tokens, Prepend-class chars, CRLF, digits.
PIECES = ["a", "Word", "naïve", "e\u0301", " ", "  ", "   ", "\t", "\n", "\r\n", "\u00a0", "\u0301", "\u0600",
          "👍🏽", "中文", "12345", "'s", "<s>", "</s>", "▁", "x" * 20, ".", ",", "\u200b", "ﬁ"]
SPACED = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


@pytest.fixture(scope="module", params=["xlmr", "t5", "albert", "llama", "modernbert", "qwen2", "wordlevel"])
def hub_kind(request, tmp_path_factory):
    import tokenizers
    from helpers.hub_files import hub_folder

    import tokkit
    folder = hub_folder(request.param, tmp_path_factory)
    return tokkit.load(folder), tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))


@settings(max_examples=150, deadline=None)
@given(text=SPACED)
def test_fast_lane_ids_are_the_whole_pipelines(hub_kind, text):
    tok, hf = hub_kind
    want = hf.encode(text, add_special_tokens=False).ids
    assert tok.encode(text) == want
    assert tok.encode_with_offsets(text).ids == want
    ids, offsets = tok.encode_batch_flat([text, text + " " + text], num_threads=1)
    assert ids[offsets[0]:offsets[1]].tolist() == want


def test_fast_lane_is_on_for_the_common_hub_files(hub_kind):
    tok, _ = hub_kind
    encoder = tok._encoder
    if plan(tok.spec).engine == "general" and tok.spec.kind == "unigram":
        assert encoder.fast_lane
