"""Sennrich-style character BPE with an end-of-word suffix, on BERT-split (cased) words.

A word's last character carries ``</w>``, so "low" is l, o, w</w>; merges are picked by
frequency exactly as `tokenizers`' BpeTrainer picks them.
"""
from __future__ import annotations

from dataclasses import dataclass

from tokkit.tokenizer import Tokenizer
from tokkit.tokenizer.recipes import char_bpe_spec
from tokkit.train.alphabet import char_alphabet
from tokkit.train.flow import Algorithm

SUFFIX = "</w>"


@dataclass
class CharBPE(Algorithm):
    """`lowercase=True` lowercases during normalisation (off by default, like CharBPETokenizer)."""

    name: str = "bpe"
    lowercase: bool = False

    def count_mode(self):
        return "bert", {"lowercase": self.lowercase, "strip_accents": None}

    def alphabet(self, table, base, limit):
        return char_alphabet(table, base, limit, variant=lambda c: c + SUFFIX, variant_at="last")

    def build(self, vocab, merges, specials):
        return Tokenizer(char_bpe_spec(vocab, merges, specials, lowercase=bool(self.lowercase)))
