"""load()'s options act alike on every encode path.

Each file is made as `tokenizers` trains and saves it, once as it is (a fast path runs it) and once
with one added token flagged so that the general path runs it (on_path). Every option of `tokkit.load`
(kind, lowercase, strip_accents, special_tokens, split_special_tokens) is checked on both against
`tokenizers` holding the same setting.
"""
from __future__ import annotations

import functools
import json

import pytest

import tokkit
from tokkit.errors import TokkitError
from tokkit.tokenizer.plan import plan

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

LINES = ["Hello World, hello there!", "The quick brown fox jumps over the lazy dog.", "Crème brûlée à Paris",
         "HELLO world again and again", "naïve café résumé", "Ünïcödé ÀÉÎÕÜ façade"] * 3
TEXTS = ["HELLO World", "hello world", "Crème BRÛLÉE", "naïve [MASK] café", "[CLS] hello [SEP] there",
         "x[MASK]y  [MASK]", "the quick brown fox", "", "   ", "résumé of the FOX"]
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def bert(lowercase: bool = True, strip_accents=None) -> Tokenizer:
    """A BERT WordPiece tokenizer trained by tokenizers on LINES, with BERT's template."""
    hf = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.normalizer = normalizers.BertNormalizer(lowercase=lowercase, strip_accents=strip_accents)
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.decoder = decoders.WordPiece()
    hf.train_from_iterator(LINES, trainers.WordPieceTrainer(vocab_size=300, special_tokens=BERT_SPECIALS,
                                                            show_progress=False))
    hf.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", hf.token_to_id("[CLS]")), ("[SEP]", hf.token_to_id("[SEP]"))])
    return hf


def char_bpe(lowercase: bool = False, strip_accents=None) -> Tokenizer:
    """Character BPE with `</w>` behind BERT's normalizer and split."""
    hf = Tokenizer(models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"))
    hf.normalizer = normalizers.BertNormalizer(lowercase=lowercase, strip_accents=strip_accents)
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.decoder = decoders.BPEDecoder()
    hf.train_from_iterator(LINES, trainers.BpeTrainer(vocab_size=300, special_tokens=BERT_SPECIALS,
                                                      end_of_word_suffix="</w>", show_progress=False))
    return hf


def byte_level() -> Tokenizer:
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator(LINES, trainers.BpeTrainer(vocab_size=400, special_tokens=BERT_SPECIALS,
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                      show_progress=False))
    return hf


MAKERS = {"wordpiece": bert, "bpe": char_bpe, "bytelevel": byte_level}
PATHS = ("fast", "general")


@functools.lru_cache(maxsize=None)
def trained(kind: str, **options) -> str:
    """The tokenizer.json of MAKERS[kind](**options), trained once (tokenizers' trainers break ties
    differently from run to run)."""
    return MAKERS[kind](**options).to_str()


def on_path(kind: str, path: str, **options) -> Tokenizer:
    """The trained tokenizer ("fast"), or a copy the general path runs ("general"): its [MASK] is matched
    in the normalized text behind BERT's normalizer, or (byte-level) takes the spaces after it, which
    add_prefix_space would put there."""
    data = json.loads(trained(kind, **options))
    if path == "general":
        byte_level = data["normalizer"] is None
        if byte_level:
            data["pre_tokenizer"]["add_prefix_space"] = True
        for token in data["added_tokens"]:
            if token["content"] == "[MASK]":
                token["rstrip" if byte_level else "normalized"] = True
    return Tokenizer.from_str(json.dumps(data))


def saved(hf: Tokenizer, tmp_path) -> str:
    hf.save(str(tmp_path / "tokenizer.json"))
    return str(tmp_path)


def engine(tok) -> str:
    return "general" if plan(tok.spec).engine == "general" else "fast"


def assert_encodes_as(tok, hf: Tokenizer):
    for text in TEXTS:
        want = hf.encode(text, add_special_tokens=False)
        assert tok.encode(text) == want.ids, text
        got = tok.encode_with_offsets(text)
        assert (got.ids, got.offsets) == (want.ids, want.offsets), text
    want = [e.ids for e in hf.encode_batch(TEXTS, add_special_tokens=False)]
    assert tok.encode_batch(TEXTS, num_threads=2) == want
    ids, ptr = tok.encode_batch_flat(TEXTS, num_threads=2)
    assert [ids[ptr[k]:ptr[k + 1]].tolist() for k in range(len(TEXTS))] == want


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("kind", ["wordpiece", "bpe"])
@pytest.mark.parametrize("option", [dict(lowercase=False), dict(lowercase=True), dict(strip_accents=True),
                                    dict(strip_accents=False), dict(lowercase=True, strip_accents=False)])
def test_normalizer_options(tmp_path, kind, path, option):
    """lowercase= and strip_accents= set the BertNormalizer, whichever path runs it."""
    base = {"wordpiece": dict(lowercase=True), "bpe": dict(lowercase=False)}[kind]
    tok = tokkit.load(saved(on_path(kind, path, **base), tmp_path), **option)
    assert engine(tok) == path
    reference = on_path(kind, path, **base)
    reference.normalizer = normalizers.BertNormalizer(**{**base, **option})
    assert_encodes_as(tok, reference)
    if option.get("lowercase") is False and kind == "wordpiece":
        assert tok.encode_with_offsets("HELLO World").tokens != ["hello", "world"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_special_tokens_option(tmp_path, kind, path):
    """special_tokens= makes vocabulary tokens special: matched whole in the raw text, skipped by
    decode(skip_special_tokens=True)."""
    hf = on_path(kind, path)
    word = min(t for t in hf.get_vocab() if t.isalpha() and t.islower() and len(t) > 2)
    tok = tokkit.load(saved(hf, tmp_path), special_tokens=[word])
    assert engine(tok) == path and word in tok.special_tokens
    hf.add_special_tokens([word])
    assert_encodes_as(tok, hf)
    ids = tok.encode(f"a {word} b")
    assert word not in tok.decode(ids, skip_special_tokens=True)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_split_special_tokens_option(tmp_path, kind, path):
    """split_special_tokens=True reads special tokens typed in the text as text."""
    hf = on_path(kind, path)
    tok = tokkit.load(saved(hf, tmp_path), split_special_tokens=True)
    assert engine(tok) == path and tok.split_special_tokens
    hf.encode_special_tokens = True
    assert_encodes_as(tok, hf)
    assert tok.token_to_id("[MASK]") not in tok.encode("a [MASK] b")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_kind_option(tmp_path, kind, path):
    """kind= names what the file holds, or the load fails with one error naming both."""
    folder = saved(on_path(kind, path), tmp_path)
    assert tokkit.load(folder, kind=kind).kind == kind
    other = next(k for k in sorted(MAKERS) if k != kind)
    with pytest.raises(TokkitError, match=f"holds a {kind} tokenizer, not kind='{other}'"):
        tokkit.load(folder, kind=other)


@pytest.mark.parametrize("path", PATHS)
def test_normalizer_options_need_a_bert_normalizer(tmp_path, path):
    """Byte-level files have no normalizer: asking to lowercase or strip accents is one error on
    either path, asking for neither is what they do already."""
    folder = saved(on_path("bytelevel", path), tmp_path)
    for option in (dict(lowercase=True), dict(strip_accents=True)):
        with pytest.raises(TokkitError, match="apply to a BertNormalizer only"):
            tokkit.load(folder, **option)
    tok = tokkit.load(folder, lowercase=False, strip_accents=False)
    assert engine(tok) == path
    assert_encodes_as(tok, on_path("bytelevel", path))
