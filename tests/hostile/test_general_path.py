"""The general compiled path under hostile tokenizer.json files and texts.

Crafted files (NaN scores, unknown merges, broken charsmaps, deep Sequences, bad regexes, odd added
tokens) must each be one TokkitError at load and one `tokkit: error:` line from the CLI; Hub-like
files must give tokenizers' ids on odd texts, the same ids on the fast lane (encode,
encode_batch_flat) as on encode_with_offsets, and the same ids on one thread as on two.
"""
from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import numpy as np
import pytest
from helpers.hub_files import edge_texts, hub_folder

import tokenizers

import tokkit
from tokkit.errors import TokkitError

from .conftest import one_error_line

tokenizers = pytest.importorskip("tokenizers")

META = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
ODD = ["", " ", "    ", "a  b", "\r\n", "x\r\ny", "e\u0301\u0301\u0301", "\u0301\u0302\u0303",
       "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466" * 3 + " a", "\x00a\x00", "nbsp\u00a0here",
       "\u2581\u2581 x", "\uff21\uff22\uff23 \ufb01 \u00bd", "hello   world\t\tfoo\r\nbar", "zero\u200bwidth",
       "\u0130stanbul \u03a3\u0391\u03a3 Stra\u00dfe", "trailing   ", "   leading"]


def _doc(model, *, normalizer=None, pre_tokenizer=None, decoder=None, added=()):
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": list(added),
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "post_processor": None,
            "decoder": decoder, "model": model}


def _unigram(vocab, unk_id=0, byte_fallback=False):
    return {"type": "Unigram", "unk_id": unk_id, "vocab": vocab, "byte_fallback": byte_fallback}


def _bpe(vocab, merges, **options):
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
             "vocab": vocab, "merges": merges}
    model.update(options)
    return model


def _added(content, idx, **flags):
    token = {"id": idx, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": True, "special": False}
    token.update(flags)
    return token


def _write(folder, doc) -> str:
    text = doc if isinstance(doc, str) else json.dumps(doc, ensure_ascii=False)
    (folder / "tokenizer.json").write_text(text, encoding="utf-8")
    return str(folder)


def _changed(folder, **fields) -> dict:
    doc = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    doc.update(fields)
    return doc


def _nested(doc: dict, field: str, key: str, inner: str, depth: int) -> str:
    """`doc` as text with `field` a Sequence nested `depth` deep (json.dumps cannot write it)."""
    text = json.dumps({**doc, field: "@@"})
    return text.replace('"@@"', ('{"type": "Sequence", "%s": [' % key) * depth + inner + "]}" * depth)


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return hub_folder("llama", tmp_path_factory)


@pytest.fixture(scope="module")
def xlmr(tmp_path_factory):
    return hub_folder("xlmr", tmp_path_factory)


def _same_as_tokenizers(folder, texts):
    """encode = encode_with_offsets = encode_batch_flat (1 and 2 threads) = tokenizers, per text."""
    tok = tokkit.load(folder)
    oracle = tokenizers.Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
    for text in texts:
        ids = tok.encode(text)
        assert ids == oracle.encode(text, add_special_tokens=False).ids, text
        assert tok.encode_with_offsets(text).ids == ids, text
    flat1, offs1 = tok.encode_batch_flat(texts * 3, num_threads=1)
    flat2, offs2 = tok.encode_batch_flat(texts * 3, num_threads=2)
    assert np.array_equal(flat1, flat2) and np.array_equal(offs1, offs2)
    assert flat1.tolist() == [i for text in texts * 3 for i in tok.encode(text)]


# ------------------------------------------------------------------------------ bad files at load
BAD_MODELS = {
    "unigram-nan-score": _unigram([["<unk>", 0.0], ["a", float("nan")]]),
    "unigram-inf-score": _unigram([["<unk>", 0.0], ["a", float("inf")]]),
    "unigram-empty-vocab": _unigram([], unk_id=None),
    "unigram-unk-outside": _unigram([["a", -1.0]], unk_id=5),
    "unigram-repeated-piece": _unigram([["<unk>", 0.0], ["a", -1.0], ["a", -2.0]]),
    "bpe-merge-unknown-token": _bpe({"a": 0, "b": 1, "ab": 2}, [["a", "c"], ["a", "b"]]),
    "bpe-merge-result-missing": _bpe({"a": 0, "b": 1}, [["a", "b"]]),
    "bpe-empty-vocab": _bpe({}, []),
    "bpe-id-past-vocab": _bpe({"a": 0, "b": 4_000_000_000}, []),
    "bpe-negative-id": _bpe({"a": 0, "b": -1}, []),
    "bpe-repeated-id": _bpe({"a": 0, "b": 0}, []),
    "bpe-vocab-list": _bpe([["a", 0]], []),
    "bpe-dropout": _bpe({"a": 0}, [], dropout=0.5),
    "bpe-byte-fallback-prefix": _bpe({"a": 0}, [], byte_fallback=True, continuing_subword_prefix="##"),
}


@pytest.mark.parametrize("name", sorted(BAD_MODELS))
def test_bad_model_is_one_error_at_load(tmp_path, name):
    with pytest.raises(TokkitError):
        tokkit.load(_write(tmp_path, _doc(BAD_MODELS[name], pre_tokenizer=META)))


BAD_PARTS = {
    "metaspace-two-chars": dict(pre_tokenizer={**META, "replacement": "__"}),
    "metaspace-empty": dict(pre_tokenizer={**META, "replacement": ""}),
    "split-bad-regex": dict(pre_tokenizer={"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated",
                                           "invert": False}),
    "split-bad-behavior": dict(pre_tokenizer={"type": "Split", "pattern": {"String": " "}, "behavior": "isolated",
                                              "invert": False}),
    "normalizer-unknown-type": dict(normalizer={"type": "Bogus"}),
    "replace-bad-regex": dict(normalizer={"type": "Replace", "pattern": {"Regex": "[a"}, "content": "x"}),
}


@pytest.mark.parametrize("name", sorted(BAD_PARTS))
def test_bad_component_is_one_error_at_load(llama, tmp_path, name):
    with pytest.raises(TokkitError):
        tokkit.load(_write(tmp_path, _changed(llama, **BAD_PARTS[name])))


@pytest.mark.parametrize("added", [_added("", 1500), _added("zz", "x"), {"content": "zz"}])
def test_bad_added_token_is_one_error_at_load(llama, tmp_path, added):
    doc = _changed(llama)
    doc["added_tokens"].append(added)
    with pytest.raises(TokkitError):
        tokkit.load(_write(tmp_path, doc))


@pytest.mark.parametrize("blob", [b"", b"!!!", b"\x10\x00\x00\x00" + b"\xff" * 16, b"\xff\xff\xff\x7f" + b"\0" * 64])
def test_broken_charsmap_is_one_error_at_load(xlmr, tmp_path, blob):
    charsmap = blob.decode() if blob == b"!!!" else base64.b64encode(blob).decode()
    doc = _changed(xlmr, normalizer={"type": "Precompiled", "precompiled_charsmap": charsmap})
    with pytest.raises(TokkitError):
        tokkit.load(_write(tmp_path, doc))


def test_mutated_charsmaps_load_and_encode_or_are_refused(xlmr, tmp_path):
    """Random byte changes to a real charsmap's trie and pool: a TokkitError or a working tokenizer,
    never a crash (the trie is walked in compiled code)."""
    doc = _changed(xlmr)
    blob = base64.b64decode(doc["normalizer"]["precompiled_charsmap"])
    size = int.from_bytes(blob[:4], "little")
    text = "Hello w\u00f6rld \ufb01 \uff21\uff22 \u00bd e\u0301 \u3000x \uff76\uff9e " + "".join(map(chr, range(0x80, 0x3000, 11)))
    outcomes = set()
    for seed in range(40):
        rng = random.Random(seed)
        mutated = bytearray(blob)
        for _ in range(rng.choice([1, 3, 10])):
            at = rng.randrange(4, 4 + size) if seed % 2 else rng.randrange(4, len(mutated))
            mutated[at] = rng.randrange(256)
        doc["normalizer"]["precompiled_charsmap"] = base64.b64encode(bytes(mutated)).decode()
        try:
            tok = tokkit.load(_write(tmp_path, doc))
        except TokkitError:
            outcomes.add("refused")
            continue
        assert tok.encode(text) == tok.encode_with_offsets(text).ids
        outcomes.add("loaded")
    assert outcomes == {"refused", "loaded"}


@pytest.mark.parametrize("field,key", [("normalizer", "normalizers"), ("pre_tokenizer", "pretokenizers"),
                                       ("decoder", "decoders")])
@pytest.mark.parametrize("depth", [900, 100_000])
def test_deep_sequences_are_one_error(llama, tmp_path, field, key, depth):
    doc = _changed(llama)
    inner = json.dumps(doc[field]) if doc[field] else '{"type": "NFC"}'
    with pytest.raises(TokkitError, match="nested too deeply"):
        tokkit.load(_write(tmp_path, _nested(doc, field, key, inner, depth)))


def test_shallow_sequences_encode_as_tokenizers(llama, tmp_path):
    doc = _changed(llama)
    _write(tmp_path, _nested(doc, "pre_tokenizer", "pretokenizers", json.dumps(doc["pre_tokenizer"]), 40))
    tok, oracle = tokkit.load(tmp_path), tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for line in ODD:
        ids = tok.encode(line)
        assert ids == oracle.encode(line, add_special_tokens=False).ids, line
        assert tok.decode(ids) == oracle.decode(ids, skip_special_tokens=False), line


# ------------------------------------------------------------------------------ the CLI
CLI_BAD = {
    "nan": '{"model": {"type": "Unigram", "unk_id": 0, "vocab": [["a", NaN]]}}',
    "cut-short": '{"model": {"type": "Unigram", "unk_id": 0, "vocab": [["a", -1.0]',
    "charsmap": json.dumps(_doc(_unigram([["<unk>", 0.0], ["a", -1.0]]), pre_tokenizer=META, normalizer={
        "type": "Precompiled", "precompiled_charsmap": base64.b64encode(b"\x10\x00\x00\x00" + b"\xff" * 16).decode()})),
    "merges": json.dumps(_doc(_bpe({"a": 0, "b": 1, "ab": 2}, [["a", "c"]]))),
    "deep": '{"model": ' + '{"type": "Sequence", "normalizers": [' * 5000 + "1" + "]}" * 5000 + "}",
    "bad-regex": json.dumps(_doc(_unigram([["<unk>", 0.0], ["a", -1.0]]), pre_tokenizer={
        "type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated", "invert": False})),
    "no-unk-at-encode": json.dumps(_doc(_unigram([["a", -1.0]], unk_id=None))),
}


@pytest.mark.parametrize("name", sorted(CLI_BAD))
def test_cli_bad_file_is_one_error_line(cli, tmp_path, monkeypatch, name):
    folder = _write(tmp_path, CLI_BAD[name])
    text = tmp_path / "in.txt"
    text.write_text("a b\nhello\n", encoding="utf-8")
    code, out, err = cli("encode", "-t", folder, str(text))
    assert code == 2
    one_error_line(err)
    assert out == ""


# ------------------------------------------------------------------------------ models at their edges
def test_unigram_without_unk_fails_on_every_lane(tmp_path):
    tok = tokkit.load(_write(tmp_path, _doc(_unigram([["a", -1.0], ["\u2581", -1.0]], unk_id=None),
                                            pre_tokenizer=META)))
    assert tok.encode("a a") == tok.encode_with_offsets("a a").ids
    for call in (lambda: tok.encode("a b"), lambda: tok.encode_with_offsets("a b"),
                 lambda: tok.encode_batch_flat(["a", "a b"] * 50, num_threads=2),
                 lambda: tok.encode_batch(["a b"], num_threads=1)):
        with pytest.raises(TokkitError, match="no unknown token"):
            call()
    assert tok.encode("a a") == tok.encode_with_offsets("a a").ids


@pytest.mark.parametrize("doc", [
    _doc(_unigram([["<unk>", 0.0], ["a", -1.0]], byte_fallback=True), pre_tokenizer=META),
    _doc(_unigram([["<unk>", 0.0], ["", -1.0], ["a", -2.0], ["\u2581", -1.0]]), pre_tokenizer=META),
    _doc(_bpe({"a": 0, "<unk>": 1}, [], byte_fallback=True, unk_token="<unk>"), pre_tokenizer=META),
    _doc(_bpe({"a": 0}, [], byte_fallback=True), pre_tokenizer=META),
    _doc(_bpe({"a": 0}, []), pre_tokenizer=META),
    _doc(_bpe({"a": 0, "<unk>": 1, "<0xC3>": 2}, [], byte_fallback=True, unk_token="<unk>", fuse_unk=True),
         pre_tokenizer=META),
], ids=["unigram-fallback-no-bytes", "unigram-empty-piece", "bpe-fallback-no-bytes-unk",
        "bpe-fallback-no-bytes-no-unk", "bpe-no-unk", "bpe-fallback-some-bytes-split"])
def test_thin_vocabularies_encode_as_tokenizers(tmp_path, doc):
    _same_as_tokenizers(_write(tmp_path, doc), ODD + ["ab", "\u00e9 a", "\u00e9\u00e9", "bb"])


def test_catastrophic_split_regex_is_cut_short(llama, tmp_path):
    doc = _changed(llama, pre_tokenizer={"type": "Split", "pattern": {"Regex": "(a+)+$"}, "behavior": "Isolated",
                                         "invert": False})
    tok = tokkit.load(_write(tmp_path, doc))
    with pytest.raises(TokkitError, match="too slow"):
        tok.encode("a" * 5000 + "!")


@pytest.mark.parametrize("pattern", [{"Regex": ""}, {"Regex": "a*"}])
def test_replace_with_empty_matches_as_tokenizers(llama, tmp_path, pattern):
    doc = _changed(llama, normalizer={"type": "Replace", "pattern": pattern, "content": "-"})
    _same_as_tokenizers(_write(tmp_path, doc), ODD)


def test_metaspace_with_space_replacement_as_tokenizers(llama, tmp_path):
    doc = _changed(llama)
    doc["pre_tokenizer"] = {**doc["pre_tokenizer"], "replacement": " "}
    _same_as_tokenizers(_write(tmp_path, doc), ODD)


# ------------------------------------------------------------------------------ added tokens
CONTENTS = ["<x>", "hello", " world", "a b", "wor", "\u2581x", "\u00df", "<x><y>", "<y>", "\u00a0", "HELLO",
            "o w", "\t"]
FLAG_TEXTS = ["hello world", "Hello World", "<x>hello<y> world", " <x> <y> ", "a b ab a  b", "<x><y>",
              "world\u00a0ss \u00df STRASSE", "\t\thello\t", "xhellox helloworld", "\u2581x x", "o w o  w"]


@pytest.mark.parametrize("seed", range(12))
def test_added_tokens_with_every_flag_as_tokenizers(llama, tmp_path, seed):
    """Random added tokens (spaces inside, overlapping, already in the vocabulary) with random flags."""
    rng = random.Random(seed)
    doc = _changed(llama)
    vocab = doc["model"]["vocab"]
    for content in rng.sample(CONTENTS, rng.randint(1, 5)):
        idx = vocab.setdefault(content, len(vocab))
        doc["added_tokens"].append(_added(content, idx, **{flag: rng.random() < .5 for flag in (
            "special", "lstrip", "rstrip", "single_word", "normalized")}))
    _same_as_tokenizers(_write(tmp_path, doc), FLAG_TEXTS)


# ------------------------------------------------------------------------------ hostile texts
@pytest.mark.parametrize("kind", ["llama", "xlmr"])
def test_hub_files_on_odd_texts(tmp_path_factory, kind):
    _same_as_tokenizers(hub_folder(kind, tmp_path_factory), ODD + edge_texts())


@pytest.mark.parametrize("kind", ["llama", "xlmr"])
@pytest.mark.parametrize("text", ["ab" * 100_000, " " * 50_000, "\u0301" * 30_000,
                                  "\U0001F468\u200d\U0001F469\u200d\U0001F467" * 5_000, "a\r\n" * 20_000,
                                  "\x00" * 20_000],
                         ids=["one-200k-word", "spaces", "marks", "zwj-run", "crlf", "nul"])
def test_long_hostile_texts(tmp_path_factory, kind, text):
    folder = hub_folder(kind, tmp_path_factory)
    tok = tokkit.load(folder)
    oracle = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    ids = tok.encode(text)
    assert ids == tok.encode_with_offsets(text).ids
    assert ids == oracle.encode(text, add_special_tokens=False).ids


@pytest.mark.parametrize("kind", ["llama", "xlmr"])
def test_lone_surrogates_encode_the_same_on_every_lane(tmp_path_factory, kind):
    tok = tokkit.load(hub_folder(kind, tmp_path_factory))
    texts = ["\ud800", "a\udfffb c", "\ud83d \ude00", "x \udc00" * 100]
    for text in texts:
        assert tok.encode(text) == tok.encode_with_offsets(text).ids
    flat, offsets = tok.encode_batch_flat(texts, num_threads=2)
    assert flat.tolist() == [i for text in texts for i in tok.encode(text)]


# ---------------------------------------------------------------------------------------------------
# The fast lane (ids only) must never cut where the model could see across a space.
def _lane_doc(model, pre=None, norm=None):
    return {"version": "1.0", "added_tokens": [], "normalizer": norm, "pre_tokenizer": pre,
            "post_processor": None, "decoder": None, "model": model}


def _pair(tmp_path, doc):
    (tmp_path / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    return tokkit.load(tmp_path), tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))


@pytest.mark.parametrize("pre", [None, {"type": "Sequence", "pretokenizers": []}, {"type": "Digits", "individual_digits": False},
                                 {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
                                 {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": False}])
def test_tokens_spanning_a_space_stay_whole_on_every_lane(tmp_path, pre):
    model = {"type": "WordLevel", "vocab": {"[UNK]": 0, "a b": 1, "a": 2, "a\u2581b": 3, "Ġ": 4}, "unk_token": "[UNK]"}
    tok, hf = _pair(tmp_path, _lane_doc(model, pre=pre))
    for text in ["a b", "a b a b", "x a b"]:
        want = hf.encode(text).ids
        assert tok.encode(text) == want and tok.encode_with_offsets(text).ids == want


def test_a_merge_across_the_metaspace_char_keeps_the_fast_lane_off(tmp_path):
    model = {"type": "BPE", "vocab": {"a": 0, "b": 1, "\u2581": 2, "a\u2581": 3}, "merges": [["a", "\u2581"]]}
    pre = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
    tok, hf = _pair(tmp_path, _lane_doc(model, pre=pre))
    assert tok.encode("a b") == hf.encode("a b").ids == [2, 3, 1]


def test_fused_unknowns_are_not_cut_at_spaces(tmp_path):
    model = {"type": "BPE", "vocab": {"a": 0, "<unk>": 1}, "merges": [], "unk_token": "<unk>", "fuse_unk": True}
    tok, hf = _pair(tmp_path, _lane_doc(model))
    assert tok.encode("b b") == hf.encode("b b").ids == [1]


def test_an_empty_string_pattern_matches_everywhere_as_in_tokenizers(tmp_path):
    model = {"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 1, "x": 2}, "unk_token": "[UNK]"}
    tok, hf = _pair(tmp_path, _lane_doc(model, pre={"type": "Split", "pattern": {"String": ""}, "behavior": "Isolated",
                                               "invert": False},
                                   norm={"type": "Replace", "pattern": {"String": ""}, "content": "x"}))
    for text in ["aa", "", "a"]:
        assert tok.encode(text) == hf.encode(text).ids
