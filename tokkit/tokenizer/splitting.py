"""Splitting a piece as tokenizers' NormalizedString.split does: the matches of a pattern (or each
delimiter character) and the stretches between them, kept as one of BEHAVIORS says.

>>> split_by(char_matches("a-b", lambda c: c == "-"), "Isolated")
[(0, 1), (1, 2), (2, 3)]
"""
from __future__ import annotations

from typing import Tuple

from tokkit.tokenizer.aligned import Aligned
from tokkit.tokenizer.onig_regex import find_matches

Span = Tuple[int, int]
Match = Tuple[Span, bool]  # a stretch of the piece and whether the pattern matched it

BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


def char_matches(text: str, is_delimiter) -> list[Match]:
    """Each delimiter character is a match of its own; the stretches between are not matches.

    >>> char_matches("a,,b", lambda c: c == ",")
    [((0, 1), False), ((1, 2), True), ((2, 3), True), ((3, 4), False)]
    """
    if not text:
        return [((0, 0), False)]
    out: list[Match] = []
    last = 0
    for i, ch in enumerate(text):
        if is_delimiter(ch):
            if last < i:
                out.append(((last, i), False))
            out.append(((i, i + 1), True))
            last = i + 1
    if last < len(text):
        out.append(((last, len(text)), False))
    return out


def regex_matches(pattern, text: str, source: dict | None = None) -> list[Match]:
    """The matches of a compiled pattern (Oniguruma's iteration, empty matches included) and the
    stretches between them.

    >>> from tokkit.tokenizer.onig_regex import regex_of
    >>> regex_matches(regex_of({"Regex": "x*"}), "axb")
    [((0, 0), True), ((0, 1), False), ((1, 2), True), ((2, 3), False), ((3, 3), True)]
    """
    if not text:
        return [((0, 0), False)]
    out: list[Match] = []
    last = 0
    for start, end in find_matches(pattern, text, source):
        if last != start:
            out.append(((last, start), False))
        out.append(((start, end), True))
        last = end
    if last != len(text):
        out.append(((last, len(text)), False))
    return out


def split_by(matches: list[Match], behavior: str) -> list[Span]:
    """tokenizers' NormalizedString.split: the stretches to keep, for one of BEHAVIORS.

    >>> m = char_matches("a-b", lambda c: c == "-")
    >>> split_by(m, "Removed"), split_by(m, "MergedWithPrevious"), split_by(m, "MergedWithNext")
    ([(0, 1), (2, 3)], [(0, 2), (2, 3)], [(0, 1), (1, 3)])
    """
    if behavior == "Removed":
        return [span for span, is_match in matches if not is_match]
    if behavior == "Isolated":
        return [span for span, _ in matches]
    if behavior == "MergedWithNext":
        backwards = _merge([((-e, -s), m) for (s, e), m in reversed(matches)], join=lambda m, prev: m and not prev)
        return [(-e, -s) for s, e in reversed(backwards)]
    join = (lambda m, prev: m == prev) if behavior == "Contiguous" else (lambda m, prev: m and not prev)
    return _merge(matches, join)


def _merge(matches: list[Match], join) -> list[Span]:
    """Stretches in order, each joining the one before when join(is_match, previous is_match)."""
    out: list[list[int]] = []
    previous = False
    for (start, end), is_match in matches:
        if join(is_match, previous) and out:
            out[-1][1] = end
        else:
            out.append([start, end])
        previous = is_match
    return [(s, e) for s, e in out]


def cut(piece: Aligned, spans: list[Span]) -> list[Aligned]:
    """The non-empty slices of a piece."""
    text, align = piece
    return [(text[s:e], align[s:e]) for s, e in spans if e > s]
