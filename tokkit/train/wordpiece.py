"""WordPiece on BERT-normalized, BERT-split words, merges scored by count (or likelihood gain, or PMI).

A word's first character is a symbol as is, later ones are ``##c``; merging a and b gives a
followed by b without its ``##``. By default the merge chosen is the most frequent pair
(``scoring="frequency"``), which gives the fewest tokens per word on every corpus measured
(docs/wordpiece-scoring.md); ``"likelihood"``, the original WordPiece criterion, takes the pair
whose merge most raises the log-likelihood of the training words under a unigram model of their
current segmentation, and ``"pmi"`` count(ab) / (count(a) * count(b)) as is (see
`tokkit.train.merge_py`).

>>> WordPiece().join("un", "##aff")
'unaff'
"""
from __future__ import annotations

from dataclasses import dataclass

from tokkit.tokenizer import Tokenizer
from tokkit.tokenizer.recipes import wordpiece_spec
from tokkit.train.alphabet import char_alphabet
from tokkit.train.flow import Algorithm

PREFIX = "##"


@dataclass
class WordPiece(Algorithm):
    """`cased=True` keeps case and accents; `scoring` is "frequency" (default), "likelihood" or "pmi"."""

    name: str = "wordpiece"
    scoring: str = "frequency"
    cased: bool = False

    def count_mode(self):
        return "bert", {"lowercase": not self.cased, "strip_accents": not self.cased}

    def alphabet(self, table, base, limit):
        return char_alphabet(table, base, limit, variant=lambda c: PREFIX + c, variant_at="rest")

    def join(self, left, right):
        return left + (right[len(PREFIX):] if right.startswith(PREFIX) else right)

    def build(self, vocab, merges, specials):
        return Tokenizer(wordpiece_spec(vocab, specials, lowercase=not self.cased, strip_accents=not self.cased))
