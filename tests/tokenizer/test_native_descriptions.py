"""Every registered component describes itself to the compiled builder, and the step it makes acts as
its readable twin does: each normalizer, pre-tokenizer and model of the registries (each compiled
variant of one: a Replace by a string, by " {2,}" and by another regex), built alone in the general
path from its `native()` description.

A component added to a registry without a sample here fails `test_every_registered_component_has_a_sample`.
"""
from __future__ import annotations

import base64

import pytest

from tokkit._native.patterns import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN, QWEN2_PATTERN
from tokkit._native.pipeline import NormKind, PipelineEncoder, PreKind
from tokkit.tokenizer import normalizers as norm
from tokkit.tokenizer import pre_tokenizers as pre
from tokkit.tokenizer.aligned import aligned
from tokkit.tokenizer.models import BPE, MODELS, Unigram, WordLevel, WordPiece
from tokkit.tokenizer.encoders import general_encoder, native
from tokkit.tokenizer.precompiled import build_charsmap
from tokkit.tokenizer.spec import Pipeline, Spec

TEXTS = ["Hello  World", "  ﬁne café 12,345 ", "e\u0301 ÀÉ\tx-y-z", "don't STOP", "中文 字", "", " ", "a\u00a0b\u2581c"]
CHARSMAP = base64.b64encode(build_charsmap({"ﬁ": "fi", "À": "A"})).decode()

NORMALIZERS = {
    "NFC": [norm.NFC()], "NFD": [norm.NFD()], "NFKC": [norm.NFKC()], "NFKD": [norm.NFKD()],
    "Lowercase": [norm.Lowercase()], "StripAccents": [norm.StripAccents()], "Nmt": [norm.Nmt()],
    "Strip": [norm.Strip(True, False), norm.Strip(False, True)],
    "Replace": [norm.Replace({"String": "l"}, "L"), norm.Replace({"Regex": " {2,}"}, " "),
                norm.Replace({"Regex": "[0-9]+"}, "#")],
    "Prepend": [norm.Prepend("\u2581")],
    "BertNormalizer": [norm.BertNormalizer(True, True, None, True), norm.BertNormalizer(False, False, False, False)],
    "Precompiled": [norm.Precompiled(CHARSMAP)],
    "Sequence": [norm.Sequence((norm.NFKC(), norm.Lowercase(), norm.Replace({"String": " "}, "\u2581")))],
}
PRE_TOKENIZERS = {
    "Metaspace": [pre.Metaspace("\u2581", "always", True), pre.Metaspace("\u2581", "first", False)],
    "Split": [pre.Split({"String": "-"}, "Isolated", False), pre.Split({"Regex": GPT2_PATTERN}, "Isolated", False),
              pre.Split({"Regex": CL100K_PATTERN}, "Removed", False), pre.Split({"Regex": QWEN2_PATTERN}, "Isolated",
                                                                                False),
              pre.Split({"Regex": O200K_PATTERN}, "MergedWithNext", False), pre.Split({"Regex": "\\d+"}, "Removed", True)],
    "ByteLevel": [pre.ByteLevel(True, True, True), pre.ByteLevel(False, True, False)],
    "Whitespace": [pre.Whitespace()], "WhitespaceSplit": [pre.WhitespaceSplit()],
    "Punctuation": [pre.Punctuation("MergedWithPrevious")], "Digits": [pre.Digits(True), pre.Digits(False)],
    "CharDelimiterSplit": [pre.CharDelimiterSplit("-")], "BertPreTokenizer": [pre.BertPreTokenizer()],
    "Sequence": [pre.Sequence((pre.WhitespaceSplit(), pre.Digits(False)))],
}
WORDS = ["hug", "hugs", "bug", "un", "unhug", "x", "gus"]
MODEL_SAMPLES = {
    "WordPiece": WordPiece(vocab=("[UNK]", "hug", "##s", "b", "##ug", "un", "##hug"), unk_token="[UNK]"),
    "BPE": BPE(vocab=("<unk>", "h", "u", "g", "s", "b", "n", "hu", "hug", "ug"),
               merges=(("h", "u"), ("hu", "g"), ("u", "g")), unk_token="<unk>"),
    "Unigram": Unigram(vocab=(("<unk>", 0.0), ("hug", -1.0), ("h", -3.0), ("u", -3.0), ("g", -3.0), ("s", -2.0),
                              ("un", -1.5), ("ug", -2.0)), unk_id=0),
    "WordLevel": WordLevel(vocab=("[UNK]", "hug", "bug", "un"), unk_token="[UNK]"),
}
WORDLEVEL = WordLevel(vocab=("[UNK]",), unk_token="[UNK]")


def compiled(pipeline: Pipeline) -> PipelineEncoder:
    return general_encoder(Spec(pipeline), False)


def test_every_registered_component_has_a_sample():
    assert set(NORMALIZERS) == set(norm.NORMALIZERS)
    assert set(PRE_TOKENIZERS) == set(pre.PRE_TOKENIZERS)
    assert set(MODEL_SAMPLES) == set(MODELS)


@pytest.mark.parametrize("normalizer", [n for ns in NORMALIZERS.values() for n in ns], ids=repr)
def test_each_normalizer_builds_and_normalizes_as_its_twin(normalizer):
    steps = native(normalizer)
    assert steps and all(isinstance(step["kind"], NormKind) for step in steps)
    encoder = compiled(Pipeline(model=WORDLEVEL, normalizer=normalizer))
    for text in TEXTS:
        want = normalizer.normalize(aligned(text))
        (got, spans), = encoder.inspect(text, pre_tokenize=False)
        assert (got, [tuple(s) for s in spans]) == (want[0], list(want[1])), (normalizer, text)


@pytest.mark.parametrize("pre_tokenizer", [p for ps in PRE_TOKENIZERS.values() for p in ps], ids=repr)
def test_each_pre_tokenizer_builds_and_splits_as_its_twin(pre_tokenizer):
    steps = native(pre_tokenizer)
    assert steps and all(isinstance(step["kind"], PreKind) for step in steps)
    encoder = compiled(Pipeline(model=WORDLEVEL, pre_tokenizer=pre_tokenizer))
    for text in TEXTS:
        want = pre_tokenizer.pre_tokenize([aligned(text)])
        got = [(piece, [tuple(s) for s in spans]) for piece, spans in encoder.inspect(text)]
        assert got == [(piece, list(spans)) for piece, spans in want], (pre_tokenizer, text)


@pytest.mark.parametrize("name", sorted(MODEL_SAMPLES))
def test_each_model_builds_and_tokenizes_as_its_twin(name):
    model = MODEL_SAMPLES[name]
    encoder = compiled(Pipeline(model=model, pre_tokenizer=pre.WhitespaceSplit()))
    for word in WORDS:
        want = model.tokenize(word)
        ids, starts, ends, _ = encoder.encode_full(word)
        assert list(zip(ids, starts, ends)) == want, (name, word)
    assert encoder.encode(" ".join(WORDS)) == [i for w in WORDS for i, _, _ in model.tokenize(w)]
