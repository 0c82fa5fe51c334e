"""Byte-level BPE (GPT-2 / RoBERTa): GPT-2 pattern pieces, all 256 bytes as symbols.

The alphabet is the 256 GPT-2 byte-to-unicode symbols in code point order of those symbols (as
written in vocab.json), which is the order `tokenizers` gives them, so merges tie-break alike.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tokkit._native.byte_symbols import bytes_to_unicode
from tokkit._native.patterns import NAMED
from tokkit._native.symbols import symbolize_bytes
from tokkit._native.text_api import FAMILY
from tokkit.text.pretokenize import GPT2_PATTERN
from tokkit.tokenizer import Tokenizer
from tokkit.tokenizer.onig_regex import regex_of
from tokkit.tokenizer.recipes import byte_level_spec
from tokkit.train.flow import Algorithm, Alphabet


@dataclass
class ByteLevel(Algorithm):
    """`pattern=None` is the GPT-2 pattern. It and the cl100k (Llama 3), qwen2 and o200k patterns, spelled as
    tokkit._native.patterns spells them, are split by compiled scanners; any other pattern by `regex`.

    >>> ByteLevel(pattern=NAMED["llama3"]).count_mode(), ByteLevel(pattern="[a-z]+|.").count_mode()
    (('cl100k', {}), ('regex', {'pattern': '[a-z]+|.'}))
    """

    name: str = "bytelevel"
    needs_unk: bool = False
    default_limit_alphabet: int | None = None
    pattern: str | None = None

    def __post_init__(self):
        if self.pattern is not None:  # read as tokenizers will read the saved file (refused before any counting)
            regex_of({"Regex": self.pattern}, "pattern")

    def count_mode(self):
        if self.pattern is None or self.pattern == GPT2_PATTERN:
            return "gpt2", {}
        family = next((name for name in FAMILY if NAMED[name] == self.pattern), None)
        if family is not None:  # a WordCounter mode: the family's scanner, as tokenizers' Split splits
            return family, {}
        return "regex", {"pattern": self.pattern}

    def alphabet(self, table, base, limit):
        b2u = bytes_to_unicode()
        order = sorted(range(256), key=lambda b: b2u[b])
        byte_ids = np.empty(256, dtype=np.int32)
        byte_ids[order] = base + np.arange(256, dtype=np.int32)
        symbols, offsets = symbolize_bytes(table.blob, table.offsets, byte_ids)
        return Alphabet(tokens=[b2u[b] for b in order], symbols=symbols, offsets=offsets, counts=table.counts)

    def build(self, vocab, merges, specials):
        return Tokenizer(byte_level_spec(vocab, merges, specials, pattern=self.pattern))
