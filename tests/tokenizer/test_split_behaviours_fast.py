"""A byte-level Split with another behaviour than Isolated, on the fast encoder where it cuts the same.

OLMo 2's file splits with the cl100k pattern, `Removed` and `invert: true`: the matches are kept and
the text between them removed. The compiled families' patterns match at every char, so nothing lies
between their matches and the pieces are the Isolated ones; the planner sends such files to the fast
byte-level encoder, and every route must give tokenizers' ids and offsets. Contiguous (one piece of
all) and Removed without invert (nothing kept) cut otherwise and stay on the general path.
"""
from __future__ import annotations

import pytest
import tokenizers
from helpers.routes import ATOMS, corpus, disagreements
from tokenizers import Regex, decoders, models, pre_tokenizers, trainers

import tokkit
from tokkit._native.patterns import NAMED
from tokkit.tokenizer.plan import plan

TEXTS = ["Hello world", "", " ", "  a  ", "It's 12345 o'clock!!\n\n", "x\r\ny", "don't\tSTOP",
         "\u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4", "e\u0301\u0301 caf\u00e9", "\u3000\u00a0 x", "a/b\n/c",
         "THE Quick's", "\U0001f600\U0001f600 ok", "12/34/5678", "   \n   ", "tab\t\t end"] + ["".join(ATOMS)]


def split_file(folder, pattern: str, behavior: str, invert: bool):
    """A byte-level BPE behind Split(pattern, behavior, invert) and ByteLevel(use_regex=false)."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior=behavior, invert=invert),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(corpus(), trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"],
                                                          initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    return tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")), tokkit.load(folder / "tokenizer.json")


@pytest.mark.parametrize("name", ["cl100k", "o200k", "qwen2"])
@pytest.mark.parametrize("behavior, invert", [("removed", True), ("isolated", True), ("merged_with_previous", False),
                                              ("merged_with_next", True)])
def test_a_family_split_that_cuts_as_isolated_runs_fast(tmp_path, name, behavior, invert):
    oracle, tok = split_file(tmp_path, NAMED[name], behavior, invert)
    assert plan(tok.spec).engine == "bytelevel"
    assert disagreements(oracle, tok, TEXTS) == []


@pytest.mark.parametrize("behavior, invert", [("contiguous", False), ("removed", False), ("contiguous", True)])
def test_a_family_split_that_cuts_otherwise_stays_general(tmp_path, behavior, invert):
    oracle, tok = split_file(tmp_path, NAMED["cl100k"], behavior, invert)
    assert plan(tok.spec).engine == "general"
    assert disagreements(oracle, tok, TEXTS) == []


def test_an_unknown_pattern_with_removed_and_invert_stays_general(tmp_path):
    """A pattern not of a compiled family may leave text between its matches: that text is removed."""
    oracle, tok = split_file(tmp_path, r"\w+", "removed", True)
    assert plan(tok.spec).engine == "general"
    assert tok.encode("ab, cd") == oracle.encode("ab, cd", add_special_tokens=False).ids
    assert disagreements(oracle, tok, TEXTS) == []
