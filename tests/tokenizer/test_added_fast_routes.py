"""Added tokens on the fast routes, against tokenizers on files tokenizers itself built and saved.

An added token past the model's vocabulary is no token of the model: tokenizers matches it in the
text (the raw text when `normalized` is false, so case-sensitively behind a lowercasing BERT
normalizer) and never lets the model write it. The fast encoders take their vocabulary from the
model alone (plan.model_vocab), so a word the normalizer turns into such a token is left to the
model, as tokenizers leaves it.
"""
from __future__ import annotations

import pytest
import tokenizers
from tokenizers import AddedToken, decoders, models, normalizers, pre_tokenizers

import tokkit
from tokkit.tokenizer.plan import model_vocab, plan

WORDPIECE_VOCAB = ["[UNK]", "[CLS]", "[SEP]", "h", "##e", "##l", "##o", "hel", "##lo", "the", "t", "##h", "##t",
                   "\u2581", "x", "there", "a"]
TEXTS = ["Hello", "hello", "HELLO there", "Hello hello HeLLo", "\u2581THE", "\u2581the x", "a\u2581the",
         "\u2581The\u2581THE hello", "xhello", "", " hello "]


def _bert_wordpiece() -> tokenizers.Tokenizer:
    vocab = {t: i for i, t in enumerate(WORDPIECE_VOCAB)}
    built = tokenizers.Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    built.normalizer = normalizers.BertNormalizer(lowercase=True)
    built.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    built.decoder = decoders.WordPiece()
    return built


def _char_bpe() -> tokenizers.Tokenizer:
    letters = sorted(set("helotrx\u2581a"))
    vocab = {t: i for i, t in enumerate(["<unk>"] + letters + ["he", "hel", "ll", "the"])}
    merges = [("h", "e"), ("he", "l"), ("l", "l"), ("t", "he")]
    built = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token="<unk>"))
    built.normalizer = normalizers.BertNormalizer(lowercase=True)
    built.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return built


def _saved(built: tokenizers.Tokenizer, added: list[AddedToken], folder):
    built.add_tokens(added)
    path = folder / "tokenizer.json"
    built.save(str(path))
    return tokkit.load(path), tokenizers.Tokenizer.from_file(str(path))


def _agree_on_every_route(tok, oracle, texts: list[str]) -> None:
    """ids by encode, encode_to_numpy, encode_batch_flat and with offsets: tokenizers' ids and offsets."""
    flat, rows = tok.encode_batch_flat(texts, num_threads=1)
    for k, text in enumerate(texts):
        want = oracle.encode(text, add_special_tokens=False)
        assert tok.encode(text) == want.ids, text
        assert tok.encode_to_numpy(text).tolist() == want.ids, text
        assert flat[rows[k]:rows[k + 1]].tolist() == want.ids, text
        got = tok.encode_with_offsets(text)
        assert (got.ids, got.offsets) == (want.ids, want.offsets), text


@pytest.mark.parametrize("content", ["hello", "\u2581the"])
@pytest.mark.parametrize("shape", [_bert_wordpiece, _char_bpe], ids=["wordpiece", "char-bpe"])
def test_a_raw_added_token_past_the_vocabulary_is_not_matched_after_lowercasing(tmp_path, shape, content):
    tok, oracle = _saved(shape(), [AddedToken(content, normalized=False)], tmp_path)
    assert plan(tok.spec).engine in ("wordpiece", "bpe")  # the fast route runs these files
    added_id = oracle.token_to_id(content)
    assert model_vocab(tok.spec)[added_id] is None
    assert added_id not in oracle.encode(content.upper()).ids
    _agree_on_every_route(tok, oracle, TEXTS)


def test_bert_hello_is_left_to_wordpiece(tmp_path):
    tok, oracle = _saved(_bert_wordpiece(), [AddedToken("hello", normalized=False)], tmp_path)
    hello = oracle.token_to_id("hello")
    assert hello == len(WORDPIECE_VOCAB)
    assert tok.encode("Hello") == oracle.encode("Hello", add_special_tokens=False).ids == [7, 8]
    assert tok.encode("hello") == [hello]
