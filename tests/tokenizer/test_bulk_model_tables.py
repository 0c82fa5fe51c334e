"""The compiled models' bulk inputs: the token blob, the merge id arrays and the merged-id guess, and
what loading skips (the collector's passes, compiling a scanned split pattern) without changing what
loads or what it encodes to."""
from __future__ import annotations

import gc
import json

import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

import tokkit
from tokkit._native.patterns import CL100K_PATTERN
from tokkit._native.pipeline import ModelKind, PipelineEncoder, PreKind, token_blob
from tokkit.errors import TokkitError
from tokkit.tokenizer.gc_pause import paused_gc
from tokkit.tokenizer.models import BPE
from tokkit.tokenizer.models.bpe import merge_ids, merged_token_ids
from tokkit.tokenizer.pre_tokenizers import Split
from tokkit.tokenizer.vocab import token_ids


def word_level(vocab: list[str | None]) -> PipelineEncoder:
    desc = {"kind": ModelKind.M_WORDLEVEL, "unk_id": 0, "tokens": token_blob(vocab)}
    return PipelineEncoder.build(len(vocab), [], [{"kind": PreKind.P_WHITESPACE_SPLIT}], desc, [])


def test_token_blob_walks_every_width_holes_and_surrogates():
    vocab = ["<unk>", "a", None, "é", "中文", "😀x", "", None, "\udc80", "z"]
    enc = word_level(vocab)
    for i, tok in enumerate(vocab):
        if tok:
            assert enc.encode(tok) == [i], tok
    assert enc.encode("a 中文 q 😀x z") == [1, 4, 0, 5, 9]


def test_token_blob_lengths_mark_holes():
    blob, chars = token_blob(["ab", None, "中"])
    assert blob == "ab中".encode() and chars.tolist() == [2, -1, 1]


@pytest.mark.parametrize("vocab, tokens", [
    (["a", "b", "ab", "x", "ba"], ["ab", "ba"]),            # the guess misses at the second
    (["a", "b", "ab"], ["ab", "ab", "ab"]),                  # runs past the vocabulary's end
    (["a", "b", None, "ab", "bb"], ["ab", "bb", "zz"]),      # a hole, an unknown token
    (["x", "y"], []),
])
def test_merged_token_ids_equal_plain_lookups(vocab, tokens):
    ids = token_ids(vocab)
    assert merged_token_ids(vocab, ids, tokens) == [ids.get(t) for t in tokens]


def test_merged_token_ids_do_not_guess_when_a_token_has_two_ids():
    vocab = ("a", "b", "ab", "ab")
    ids = token_ids(vocab)  # the last id wins
    assert merged_token_ids(vocab, ids, ["ab"]) == [3]


def test_merge_ids_keep_rank_order_and_duplicates():
    vocab = ["a", "b", "c", "ab", "bc"]
    lefts, rights, merged = merge_ids(vocab, token_ids(vocab), [("a", "b"), ("b", "c"), ("a", "b")], None, "m")
    assert (list(lefts), list(rights), list(merged)) == ([0, 1, 0], [1, 2, 1], [3, 4, 3])


def test_bad_merge_still_names_its_rank():
    vocab = ["a", "b", "ab"]
    with pytest.raises(TokkitError, match=r"merges\[1\].*'b a'"):
        merge_ids(vocab, token_ids(vocab), [("a", "b"), ("b", "a")], None, "t.json")


def test_compiled_bpe_keeps_a_duplicate_merges_last_rank():
    """The compiled table keeps a pair's first entry: the ranks go in from the last, as the twin's dict."""
    model = BPE(vocab=("a", "b", "c", "ab", "bc"), merges=(("a", "b"), ("b", "c"), ("a", "b")))
    enc = PipelineEncoder.build(5, [], [], model.native(), [])
    assert enc.encode("abc") == [t for t, _, _ in model.tokenize("abc")] == [0, 4]


def test_paused_gc_restores_the_collector_as_it_was():
    assert gc.isenabled()
    with pytest.raises(ValueError), paused_gc():
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_scanned_split_pattern_loads_and_a_bad_regex_still_fails():
    assert Split.from_json({"type": "Split", "pattern": {"Regex": CL100K_PATTERN}, "behavior": "Isolated",
                            "invert": False}, "t.json").scanner == "cl100k"
    with pytest.raises(TokkitError, match="not a valid regular expression"):
        Split.from_json({"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated", "invert": False},
                        "t.json")


def test_byte_level_file_encodes_as_tokenizers(tmp_path):
    """A small byte-level BPE with added tokens through load: the paths the bulk inputs feed."""
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    lines = ["the cat sat on the mat", "über naïve café 中文字", "numbers 12345 and more text"] * 20
    hf.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>"],
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                      show_progress=False))
    path = tmp_path / "tokenizer.json"
    path.write_text(hf.to_str(), encoding="utf-8")
    tok = tokkit.load(path)
    for text in lines[:3] + ["<s>the cat über 99", "zzz ééé"]:
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
    assert json.loads(path.read_text())["model"]["merges"]
