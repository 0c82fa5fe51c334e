"""Thousands of added tokens, as Gemma-3-sized files carry them, found as tokenizers finds them: many
tokens sharing first characters and prefixes, tokens inside other tokens, non-ASCII ones, on the
fast paths (tokens without flags) and on the general path (every flag), against tokenizers."""
import json
import random

import pytest
from helpers.hub_files import hub_folder
from helpers.trained import bytelevel, wordpiece
from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers

import tokkit

LINES = ["hello world, école", "the world of hello", "a b ab abc", "x y z 😀", "<unused12> is a tag"] * 30
ALPHABET = "abcé<>|_ 😀"




def many_tokens(rng: random.Random, n: int) -> list[str]:
    """n distinct contents: Gemma-style <unusedN> tags (one shared first char, long shared prefixes)
    and short random strings over a small alphabet (tokens inside tokens, overlapping matches)."""
    tags = [f"<unused{i}>" for i in range(n // 2)]
    short = set()
    while len(short) < n - len(tags):
        short.add("".join(rng.choice(ALPHABET) for _ in range(rng.randint(2, 6))).strip() or "ab")
    return tags + sorted(short)


def texts(rng: random.Random, tokens: list[str], count: int) -> list[str]:
    words = ["hello", "world", " ", "  ", "école", "abc", "<", ">", "unused", "😀", "x", "\t"]
    return ["".join(rng.choice(tokens) if rng.random() < 0.3 else rng.choice(words) for _ in range(rng.randint(0, 25)))
            for _ in range(count)]


@pytest.fixture(scope="module", params=["wordpiece", "bytelevel", "xlmr"])
def base(request, tmp_path_factory) -> str:
    if request.param == "wordpiece":
        return wordpiece(LINES).to_str()
    if request.param == "bytelevel":
        return bytelevel(LINES).to_str()
    return (hub_folder(request.param, tmp_path_factory) / "tokenizer.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("flags", ["none", "mixed"])
def test_thousands_of_added_tokens_encode_as_tokenizers(base, flags, tmp_path):
    rng = random.Random(7)
    contents = many_tokens(rng, 3000)
    hf = Tokenizer.from_str(base)
    for i, content in enumerate(contents):
        if flags == "none":  # what the fast paths take
            token = AddedToken(content, special=i % 2 == 0, normalized=False)
        else:
            token = AddedToken(content, single_word=rng.random() < 0.2, lstrip=rng.random() < 0.2,
                               rstrip=rng.random() < 0.2, normalized=rng.random() < 0.3, special=rng.random() < 0.5)
        (hf.add_special_tokens if token.special else hf.add_tokens)([token])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = tokkit.load(path)
    lines = texts(rng, contents, 200)
    for text in lines:
        want = hf.encode(text, add_special_tokens=False)
        assert tok.encode(text) == want.ids, text
        assert tok.encode_with_offsets(text).ids == want.ids, text
    ids, offsets = tok.encode_batch_flat(lines)
    assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == \
        [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]


@pytest.mark.parametrize("kind", ["wordpiece", "bytelevel"])
def test_thousands_of_special_tokens_on_the_fast_paths(kind, tmp_path):
    """vocab.txt and vocab.json + merges.txt folders with thousands of special tokens in their
    vocabulary (the fast paths' own files), against tokenizers with the same tokens added."""
    rng = random.Random(11)
    hf = wordpiece(LINES) if kind == "wordpiece" else bytelevel(LINES)
    vocab = sorted(hf.get_vocab().items(), key=lambda kv: kv[1])
    extra = [t for t in many_tokens(rng, 3000) if " " not in t and t not in hf.get_vocab()]
    if kind == "wordpiece":
        (tmp_path / "vocab.txt").write_text("".join(t + "\n" for t, _ in vocab) + "".join(t + "\n" for t in extra),
                                            encoding="utf-8")
        hf = Tokenizer(models.WordPiece.from_file(str(tmp_path / "vocab.txt"), unk_token="[UNK]"))
        hf.normalizer = normalizers.BertNormalizer(lowercase=True)
        hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    else:
        hf.model.save(str(tmp_path))
        data = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
        data.update({t: len(vocab) + k for k, t in enumerate(extra)})
        (tmp_path / "vocab.json").write_text(json.dumps(data), encoding="utf-8")
        hf = Tokenizer(models.BPE.from_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt")))
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in extra])
    tok = tokkit.load(tmp_path, special_tokens=extra)
    lines = texts(rng, extra, 200)
    for text in lines:
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids, text
    ids, offsets = tok.encode_batch_flat(lines)
    assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == \
        [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]


def test_split_special_tokens_pass_over_specials_as_tokenizers(tmp_path):
    """A special token that split_special_tokens turns into text still hides the tokens that
    overlap it (tokenizers matches it, then passes it over)."""
    hf = bytelevel(LINES)
    hf.add_special_tokens([AddedToken("<x>", special=True, normalized=False)])
    hf.add_tokens([AddedToken("x>y", special=False, normalized=False)])
    hf.encode_special_tokens = True
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = tokkit.load(path, split_special_tokens=True)
    for text in ["a<x>y", "x>y <x>", "<x>x>y"]:
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids, text


@pytest.mark.parametrize("make", [bytelevel, wordpiece])
def test_specials_past_the_vocabulary_take_the_fast_encoder(tmp_path, make):
    # Llama 3's shape: special tokens the model lacks, at the ids after its vocabulary; the fast
    # encoder finds them in the raw text and writes their ids, as tokenizers does
    from tokkit._native.encode import Encoder

    lines = ["the cat sat on the mat", "é中 words and more words", "numbers 123 4567"] * 20
    hf = make(lines)
    size = hf.get_vocab_size()
    hf.add_special_tokens(["<|begin|>", "<|end|>", "<|reserved_0|>"])
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = tokkit.load(str(tmp_path / "tokenizer.json"))
    assert isinstance(tok._encoder, Encoder)
    texts = ["<|begin|>the cat<|end|>", "x<|reserved_0|><|reserved_0|>y é中", "<|begin", "", "words<|end|>"]
    want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert tok.encode_batch(texts) == want and max(max(w, default=0) for w in want) >= size
    ids, offsets = tok.encode_batch_flat(texts, num_threads=2)
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(texts))] == want
    for text in texts:
        assert tok.encode_with_offsets(text).tokens == hf.encode(text, add_special_tokens=False).tokens
