"""Aligned strings: text whose characters each carry the span of the original text they come from.

tokenizers' normalizers move spans along as they rewrite text, and the readable twins of the
normalizers and pre-tokenizers do the same through `apply_changes` (tokenizers'
NormalizedString.transform). The Unicode forms, lowercasing and filters every twin builds on are
here, over the character tables the compiled pipeline reads (tokkit._native.unicode_tables).

>>> unicode_form(aligned("e\u0301"), compatibility=False, compose=True)
('é', [(0, 1)])
"""
from __future__ import annotations

from functools import cached_property, lru_cache
from typing import List, Tuple

import numpy as np

from tokkit._native import unicode_tables as ut
from tokkit.errors import TokkitError

Span = Tuple[int, int]
Aligned = Tuple[str, List[Span]]
Change = Tuple[str, int]


def aligned(text: str, start: int = 0) -> Aligned:
    """`text` as tokenizers starts it: each character its own span (shifted by `start`).

    >>> aligned("ab", 3)
    ('ab', [(3, 4), (4, 5)])
    """
    return text, [(start + i, start + i + 1) for i in range(len(text))]


def apply_changes(text: Aligned, changes: list[Change], removed_first: int = 0, origin: int | None = None) -> Aligned:
    """tokenizers' NormalizedString.transform over the whole string.

    `removed_first` characters are dropped before the first change; `origin` is the span start an
    insertion before every character takes (default: the first character's span start).

    tokenizers finds "the whole string" by mapping the original text back, which leaves out leading
    characters with empty spans (inserted at the origin by Replace or Prepend("")): those stay in
    front untouched while the changes (made for the whole string) apply after them, and tokenizers
    panics when they run past the end; that is a TokkitError here.

    >>> apply_changes(aligned("ab"), [("x", 0), ("y", 1), ("b", 0)])
    ('xyb', [(0, 1), (0, 1), (1, 2)])
    """
    chars, spans = text
    if not chars:
        return text
    if origin is None:
        origin = spans[0][0]
    first = next((i for i, (start, end) in enumerate(spans) if start != end), len(spans))
    at = min(first + removed_first, len(chars))
    new_spans = []
    for _, change in changes:
        if change > 0:
            new_spans.append(spans[at - 1] if at else (origin, origin))
            continue
        if at >= len(chars):
            raise TokkitError("normalizer: tokenizers fails on this text (a character inserted at the start "
                              "with an empty span is followed by a normalizer that rewrites the text)")
        new_spans.append(spans[at])
        at = min(at + 1 - change, len(chars))
    return chars[:first] + "".join(c for c, _ in changes), spans[:first] + new_spans


def code_points(text: str) -> list[int]:
    """The code points of `text`, as the compiled steps take a string.

    >>> code_points("a\u2581")
    [97, 9601]
    """
    return [ord(c) for c in text]


def origin_of(text: Aligned, origin: int | None) -> int:
    return origin if origin is not None else (text[1][0][0] if text[1] else 0)


# ------------------------------------------------------------------------------------ tables

class UnicodeData:
    """The character tables the twins read, as dicts (from the same arrays the compiled code reads).

    Each dict is built on first use: a pipeline whose twins only ask for `flags` (a pre-tokenizer's
    character classes) never pays for the decomposition maps.

    - nfd, nfkd: code point -> full canonical / compatibility decomposition (str);
    - lower: code point -> lowercase (str);
    - ccc: code point -> canonical combining class (non-starters only);
    - compose: (first, second) -> composite code point;
    - flags: uint16 per code point: unicode_tables.WHITESPACE, PUNCT, NUMERIC, WORD, ...
    """

    @cached_property
    def flags(self) -> np.ndarray:
        return ut.norm_tables()["flags"]

    @cached_property
    def nfd(self) -> dict:
        return _char_map(*_sparse(*ut.bert_maps()["maps"]["nfd"]), ut.bert_maps()["pool"])

    @cached_property
    def nfkd(self) -> dict:
        index = ut.norm_tables()["nfkd_index"]
        cps = np.flatnonzero(index)
        return _char_map(cps, index[cps], ut.norm_tables()["nfkd_pool"])

    @cached_property
    def lower(self) -> dict:
        return _char_map(*_sparse(*ut.bert_maps()["maps"]["lower"]), ut.bert_maps()["pool"])

    @cached_property
    def ccc(self) -> dict:
        cps, marks = _sparse(*ut.bert_maps()["marks"])
        ccc = marks & 0xFF
        return dict(zip(cps[ccc != 0].tolist(), ccc[ccc != 0].tolist()))

    @cached_property
    def compose(self) -> dict:
        norm = ut.norm_tables()
        keys = norm["compose_keys"]
        pairs = zip((keys >> np.uint64(21)).tolist(), (keys & np.uint64(0x1FFFFF)).tolist())
        return dict(zip(pairs, norm["compose_values"].tolist()))


def _char_map(cps: np.ndarray, starts: np.ndarray, pool: np.ndarray) -> dict:
    """{code point: result} from the code points a map changes, their entries' starts and the pool.

    The pool is decoded as one string (its length entries become characters that are never read), so
    each result is a slice of it.
    """
    starts = starts.astype(np.int64)
    lengths = pool[starts].tolist()
    text = pool.astype("<u4").tobytes().decode("utf-32-le")
    return dict(zip(cps.tolist(), [text[s + 1:s + 1 + n] for s, n in zip(starts.tolist(), lengths)]))


def _sparse(stage1: np.ndarray, stage2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The code points a two-stage table holds a non-zero value for, and those values (reading only
    the blocks that are not the shared all-zero one)."""
    blocks = np.flatnonzero(stage1)
    rows = stage2.reshape(-1, 256)[stage1[blocks]]
    row, col = np.nonzero(rows)
    return blocks[row] * 256 + col, rows[row, col]


@lru_cache(maxsize=1)
def unicode_data() -> UnicodeData:
    """The tables, each loaded once.

    >>> unicode_data().nfkd[0xFB01], unicode_data().compose[(ord("e"), 0x301)] == ord("é")
    ('fi', True)
    """
    return UnicodeData()


# ------------------------------------------------------------------------------------ Unicode forms

def decompose(text: str, table: dict, ccc: dict) -> list[Change]:
    """Full decomposition, each character's first piece replacing it and the rest inserted after, then
    each run of non-starters stably sorted by combining class (the changes move with the characters).

    >>> decompose("é\\u0316", unicode_data().nfd, unicode_data().ccc)
    [('e', 0), ('̖', 0), ('́', 1)]
    """
    out: list[Change] = []
    run: list[Change] = []
    for ch in text:
        for k, piece in enumerate(table.get(ord(ch), ch)):
            if ccc.get(ord(piece), 0) == 0:
                out.extend(sorted(run, key=lambda item: ccc[ord(item[0])]))
                run = []
                out.append((piece, int(k > 0)))
            else:
                run.append((piece, int(k > 0)))
    out.extend(sorted(run, key=lambda item: ccc[ord(item[0])]))
    return out


def recompose(items: list[Change], compose: dict, ccc: dict) -> list[Change]:
    """Canonical composition of a decomposed list, as unicode-normalization-alignments does it: a
    character joins the last starter unless blocked; the composite's change is the starter's plus
    the joined character's minus one (so it keeps the starter's span and swallows the other).

    >>> d = unicode_data()
    >>> recompose([("e", 0), ("\\u0301", 0)], d.compose, d.ccc)
    [('é', -1)]
    """
    out: list[Change] = []
    starter: Change | None = None
    held: list[Change] = []  # characters after the starter that did not join it
    for ch, change in items:
        cls = ccc.get(ord(ch), 0)
        if starter is None:
            if cls:
                out.append((ch, change))
            else:
                starter = (ch, change)
            continue
        blocked = bool(held) and ccc.get(ord(held[-1][0]), 0) >= cls
        joined = None if blocked else compose.get((ord(starter[0]), ord(ch)))
        if joined is not None:
            starter = (chr(joined), starter[1] + change - 1)
        elif cls == 0:
            out.append(starter)
            out.extend(held)
            starter, held = (ch, change), []
        else:
            held.append((ch, change))
    if starter is not None:
        out.append(starter)
    return out + held


def unicode_form(text: Aligned, compatibility: bool, compose: bool) -> Aligned:
    d = unicode_data()
    items = decompose(text[0], d.nfkd if compatibility else d.nfd, d.ccc)
    return apply_changes(text, recompose(items, d.compose, d.ccc) if compose else items)


def has_flag(ch: str, bit: int) -> bool:
    return bool(unicode_data().flags[ord(ch)] & bit)


def keep_chars(text: Aligned, keep) -> Aligned:
    """tokenizers' NormalizedString.filter: each kept character replaces itself and removes the
    dropped ones after it (so kept characters keep their own spans)."""
    changes: list[Change] = []
    dropped = first_dropped = 0
    for ch in text[0]:
        if not keep(ch):
            dropped += 1
            continue
        if changes:
            changes[-1] = (changes[-1][0], -dropped)
        else:
            first_dropped = dropped
        changes.append((ch, 0))
        dropped = 0
    if changes:
        changes[-1] = (changes[-1][0], -dropped)
    return apply_changes(text, changes, first_dropped)


def lowercased(text: Aligned) -> Aligned:
    lower = unicode_data().lower
    return apply_changes(text, [(c, int(k > 0)) for ch in text[0] for k, c in enumerate(lower.get(ord(ch), ch))])
