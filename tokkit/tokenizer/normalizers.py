"""Normalizers of a tokenizer.json, each with its readable twin of tokenizers' behaviour and alignments.

A twin, `normalize(aligned, origin=None)`, maps an Aligned string, (text, spans), to another:
spans[i] is the (start, end) span of the ORIGINAL text that character i comes from. `origin` is
where the text starts in the original (its first span's start when not given; a Sequence passes
its own on, since a character inserted before all others takes the empty span there).

Every change goes through `apply_changes`, which is tokenizers' NormalizedString.transform: a list
of (char, change) where change 0 replaces the next character (and takes its span), 1 inserts
(taking the span of the character before, or the empty span at the origin when there is none) and
-k replaces and then removes k more. So a composed "é" from "e" + U+0301 keeps the span of "e"
alone, and a removed first character hands its span to the next one when the change list charges
the removal to no character (Precompiled).

The character tables are tokkit/data/unicode_tables.json, probed from tokenizers per code point and
shared with the compiled pipeline (tokkit._native.unicode_tables: build_tables and norm_tables).

>>> n = normalizer_from_json({"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]}, "t.json")
>>> n.normalize(aligned("Ｈｉ"))
('hi', [(0, 1), (1, 2)])
>>> normalizer_to_json(n)["normalizers"][1]
{'type': 'Lowercase'}
"""
from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from functools import lru_cache
from typing import List, Tuple, Union

import numpy as np

from tokkit._native import unicode_tables as ut
from tokkit.errors import TokkitError
from tokkit.text.normalize import BertNorm, bert_alignments
from tokkit.tokenizer import precompiled
from tokkit.tokenizer.onig_regex import find_matches, regex_of
from tokkit.tokenizer.models.wordlevel import json_field, json_kind, json_object

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


def _origin(text: Aligned, origin: int | None) -> int:
    return origin if origin is not None else (text[1][0][0] if text[1] else 0)


# ------------------------------------------------------------------------------------ tables

@dataclass(frozen=True)
class UnicodeData:
    """The character tables the twins read, as dicts (from the same arrays the compiled code reads)."""

    nfd: dict  # code point -> full canonical decomposition (str)
    nfkd: dict  # code point -> full compatibility decomposition
    lower: dict  # code point -> lowercase (str)
    ccc: dict  # code point -> canonical combining class (non-starters only)
    compose: dict  # (first, second) -> composite code point
    flags: np.ndarray  # uint16 per code point: unicode_tables.WHITESPACE, PUNCT, NUMERIC, WORD, ...


def _char_map(index: np.ndarray, pool: np.ndarray) -> dict:
    """{code point: result} from a per-code-point pool index (0 = unchanged) and its pool."""
    cps = np.flatnonzero(index)
    starts = index[cps].astype(np.int64)
    return {int(c): "".join(map(chr, pool[s + 1:s + 1 + int(pool[s])].tolist())) for c, s in zip(cps, starts)}


def _full(stage1: np.ndarray, stage2: np.ndarray) -> np.ndarray:
    return stage2.reshape(-1, 256)[stage1].reshape(-1)


@lru_cache(maxsize=1)
def unicode_data() -> UnicodeData:
    """The tables, loaded once.

    >>> unicode_data().nfkd[0xFB01], unicode_data().compose[(ord("e"), 0x301)] == ord("é")
    ('fi', True)
    """
    bert = ut.build_tables({"L": 1, "N": 1, "S": 1, "clean_remove": 2, "clean_space": 2, "cjk": 2,
                            "split_space": 2, "punct": 2})
    norm = ut.norm_tables()
    marks = _full(*bert["marks"])
    ccc = {int(c): int(marks[c] & 0xFF) for c in np.flatnonzero(marks & 0xFF)}
    compose = {(int(k) >> 21, int(k) & 0x1FFFFF): int(v) for k, v in zip(norm["compose_keys"], norm["compose_values"])}
    return UnicodeData(nfd=_char_map(_full(*bert["maps"]["nfd"]), bert["pool"]),
                       nfkd=_char_map(norm["nfkd_index"], norm["nfkd_pool"]),
                       lower=_char_map(_full(*bert["maps"]["lower"]), bert["pool"]),
                       ccc=ccc, compose=compose, flags=norm["flags"])


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


def _form(text: Aligned, compatibility: bool, compose: bool) -> Aligned:
    d = unicode_data()
    items = decompose(text[0], d.nfkd if compatibility else d.nfd, d.ccc)
    return apply_changes(text, recompose(items, d.compose, d.ccc) if compose else items)


def _flag(ch: str, bit: int) -> bool:
    return bool(unicode_data().flags[ord(ch)] & bit)


def _keep(text: Aligned, keep) -> Aligned:
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


def _lowercase(text: Aligned) -> Aligned:
    lower = unicode_data().lower
    return apply_changes(text, [(c, int(k > 0)) for ch in text[0] for k, c in enumerate(lower.get(ord(ch), ch))])


# ------------------------------------------------------------------------------------ JSON reading

_REQUIRED = object()


def read_fields(obj, where: str, fields: dict) -> dict:
    """Check a component's JSON object: `fields` maps each allowed key to (types, default or
    _REQUIRED); an unknown key, a missing required one or a wrong type is one TokkitError.

    >>> read_fields({"type": "X", "a": 1}, "t.json: normalizer.X", {"a": ((bool,), _REQUIRED)})
    Traceback (most recent call last):
    tokkit.errors.TokkitError: t.json: normalizer.X: field 'a' must be true or false, got an integer
    """
    json_object(obj, where)
    for key in obj:
        if key != "type" and key not in fields:
            raise TokkitError(f"{where}: unknown field {key!r} (tokkit reads {', '.join(fields) or 'none'})")
    out = {}
    for key, (types, default) in fields.items():
        extra = () if default is _REQUIRED else (default,)  # json_field: no default means required
        out[key] = json_field(obj, key, types, where, *extra)
    return out


def read_pattern(obj, where: str) -> dict:
    """A pattern object as tokenizers writes it: {"String": s} or {"Regex": r}."""
    if not isinstance(obj, dict) or len(obj) != 1 or next(iter(obj)) not in ("String", "Regex") \
            or not isinstance(next(iter(obj.values())), str):
        raise TokkitError(f"{where}: field 'pattern' must be {{\"String\": text}} or {{\"Regex\": pattern}}, "
                          f"got {obj!r}")
    return dict(obj)


def _simple(cls, obj: dict, where: str):
    return cls(**read_fields(obj, f"{where}: normalizer.{cls.__name__}", _fields_of(cls)))


def _fields_of(cls) -> dict:
    return getattr(cls, "_FIELDS", {})


# ------------------------------------------------------------------------------------ components

class _NoFields:
    """JSON reading and writing of a normalizer that has no fields besides its type."""

    @classmethod
    def from_json(cls, obj: dict, where: str):
        return _simple(cls, obj, where)

    def to_json(self) -> dict:
        return {"type": type(self).__name__}


@dataclass(frozen=True)
class NFC(_NoFields):
    """Canonical decomposition, then composition (tokenizers' Unicode 9 tables).

    >>> NFC().normalize(aligned("e\\u0301"))
    ('é', [(0, 1)])
    """

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return _form(text, compatibility=False, compose=True)


@dataclass(frozen=True)
class NFD(_NoFields):
    """Canonical decomposition with canonical ordering of the marks.

    >>> text, spans = NFD().normalize(aligned("\\u00e9"))
    >>> text == "e\\u0301", spans
    (True, [(0, 1), (0, 1)])
    """

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return _form(text, compatibility=False, compose=False)


@dataclass(frozen=True)
class NFKC(_NoFields):
    """Compatibility decomposition, then canonical composition.

    >>> NFKC().normalize(aligned("ﬁ"))
    ('fi', [(0, 1), (0, 1)])
    """

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return _form(text, compatibility=True, compose=True)


@dataclass(frozen=True)
class NFKD(_NoFields):
    """Compatibility decomposition with canonical ordering.

    >>> NFKD().normalize(aligned("①"))[0]
    '1'
    """

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return _form(text, compatibility=True, compose=False)


@dataclass(frozen=True)
class Lowercase(_NoFields):
    """Rust's char::to_lowercase per character (no final-sigma rule; "İ" becomes two characters).

    >>> Lowercase().normalize(aligned("İA"))
    ('i̇a', [(0, 1), (0, 1), (1, 2)])
    """

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return _lowercase(text)


@dataclass(frozen=True)
class StripAccents(_NoFields):
    """Removes combining marks (Mn, Mc, Me of Unicode 9) without decomposing first.

    >>> StripAccents().normalize(aligned("é e\\u0301"))
    ('é e', [(0, 1), (1, 2), (2, 3)])
    """

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return _keep(text, lambda c: not _flag(c, ut.STRIP_ACCENT))


@dataclass(frozen=True)
class Nmt(_NoFields):
    """tokenizers' Nmt: drops some control characters and turns some spaces and separators into " ".

    >>> Nmt().normalize(aligned("a\\x01\\tb"))
    ('a b', [(0, 1), (2, 3), (3, 4)])
    """

    _DROP = frozenset([*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F])
    _SPACE = frozenset([0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD])

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        kept = _keep(text, lambda c: ord(c) not in self._DROP)
        return apply_changes(kept, [(" " if ord(c) in self._SPACE else c, 0) for c in kept[0]])


@dataclass(frozen=True)
class Strip:
    """Removes leading and/or trailing whitespace (Rust's char::is_whitespace).

    >>> Strip(strip_left=True, strip_right=False).normalize(aligned(" a "))
    ('a ', [(1, 2), (2, 3)])
    """

    strip_left: bool
    strip_right: bool
    _FIELDS = {"strip_left": ((bool,), _REQUIRED), "strip_right": ((bool,), _REQUIRED)}

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        chars = text[0]
        lead = trail = 0
        while self.strip_left and lead < len(chars) and _flag(chars[lead], ut.WHITESPACE):
            lead += 1
        while self.strip_right and trail < len(chars) and _flag(chars[-1 - trail], ut.WHITESPACE):
            trail += 1
        if not lead and not trail:
            return text
        # tokenizers charges the trailing removal to the character at index (UTF-8 length - trail - 1),
        # which is the last kept one only for ASCII; unconsumed trailing characters vanish anyway
        charged = len(chars.encode("utf-8")) - trail - 1
        changes = [(c, -trail if i == charged else 0) for i, c in enumerate(chars) if lead <= i < len(chars) - trail]
        return apply_changes(text, changes, lead)

    @classmethod
    def from_json(cls, obj: dict, where: str):
        return _simple(cls, obj, where)

    def to_json(self) -> dict:
        return {"type": "Strip", "strip_left": self.strip_left, "strip_right": self.strip_right}


@dataclass(frozen=True)
class Replace:
    """Replaces every match of `pattern` by `content`; pattern is {"String": text} or {"Regex": pattern}.

    The inserted characters take the span of the last character matched (the one before an empty
    match, or the origin at the start). Regex patterns are Oniguruma's in tokenizers and run here
    on `regex` after translation (see regex_of).

    >>> Replace(pattern={"String": "  "}, content=" ").normalize(aligned("a  b"))
    ('a b', [(0, 1), (2, 3), (3, 4)])
    """

    pattern: dict
    content: str
    _FIELDS = {"pattern": ((dict,), _REQUIRED), "content": ((str,), _REQUIRED)}

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        chars, spans = text
        if not chars:
            return text
        origin = _origin(text, origin)
        out, out_spans, last = [], [], 0
        for start, end in find_matches(regex_of(self.pattern), chars, self.pattern):
            out.append(chars[last:start])
            out_spans.extend(spans[last:start])
            out.append(self.content)
            out_spans.extend([spans[end - 1] if end else (origin, origin)] * len(self.content))
            last = end
        out.append(chars[last:])
        out_spans.extend(spans[last:])
        return "".join(out), out_spans

    @classmethod
    def from_json(cls, obj: dict, where: str):
        where = f"{where}: normalizer.Replace"
        fields = read_fields(obj, where, cls._FIELDS)
        pattern = read_pattern(fields["pattern"], where)
        regex_of(pattern, where)
        return cls(pattern=pattern, content=fields["content"])

    def to_json(self) -> dict:
        return {"type": "Replace", "pattern": dict(self.pattern), "content": self.content}


@dataclass(frozen=True)
class Prepend:
    """Puts `prepend` before a non-empty text; it and the first character take that character's span.

    >>> Prepend(prepend="▁").normalize(aligned("ab"))
    ('▁ab', [(0, 1), (0, 1), (1, 2)])
    """

    prepend: str
    _FIELDS = {"prepend": ((str,), _REQUIRED)}

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        chars, spans = text
        if not chars:
            return text
        # tokenizers transforms the first character into prepend + itself: the first new character
        # replaces it, the others (itself included) are insertions
        head = [(c, int(k > 0)) for k, c in enumerate(self.prepend)] + [(chars[0], 1)]
        new, new_spans = apply_changes((chars[:1], spans[:1]), head, origin=_origin(text, origin))
        return new + chars[1:], new_spans + spans[1:]

    @classmethod
    def from_json(cls, obj: dict, where: str):
        return _simple(cls, obj, where)

    def to_json(self) -> dict:
        return {"type": "Prepend", "prepend": self.prepend}


@dataclass(frozen=True)
class BertNormalizer:
    """BERT's cleaning, CJK spacing, accent stripping and lowercasing (tokkit.text.normalize, compiled).

    >>> BertNormalizer(True, True, None, True).normalize(aligned("Hé中"))
    ('he 中 ', [(0, 1), (1, 2), (2, 3), (2, 3), (2, 3)])
    """

    clean_text: bool
    handle_chinese_chars: bool
    strip_accents: Union[bool, None]
    lowercase: bool
    _FIELDS = {"clean_text": ((bool,), _REQUIRED), "handle_chinese_chars": ((bool,), _REQUIRED),
               "strip_accents": ((bool, type(None)), None), "lowercase": ((bool,), _REQUIRED)}

    @property
    def options(self) -> BertNorm:
        return BertNorm(self.clean_text, self.handle_chinese_chars, self.strip_accents, self.lowercase)

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        chars, spans = text
        if spans and spans[0][0] == spans[0][1]:
            raise TokkitError("normalizer.BertNormalizer: tokenizers fails on a text that starts with a character "
                              "inserted with an empty span (by Replace or Prepend)")
        new, new_spans = bert_alignments(chars, self.options)
        return new, [spans[start] for start, _ in new_spans]

    @classmethod
    def from_json(cls, obj: dict, where: str):
        return _simple(cls, obj, where)

    def to_json(self) -> dict:
        return {"type": "BertNormalizer", "clean_text": self.clean_text,
                "handle_chinese_chars": self.handle_chinese_chars, "strip_accents": self.strip_accents,
                "lowercase": self.lowercase}


@dataclass(frozen=True)
class Precompiled:
    """SentencePiece's precompiled_charsmap (base64, as in tokenizer.json); see tokkit.tokenizer.precompiled.

    >>> p = Precompiled(base64.b64encode(precompiled.build_charsmap({"ﬁ": "fi"})).decode())
    >>> p.normalize(aligned("ﬁx"))
    ('fix', [(0, 1), (0, 1), (1, 2)])
    """

    precompiled_charsmap: str
    _FIELDS = {"precompiled_charsmap": ((str,), _REQUIRED)}

    @property
    def charsmap(self) -> precompiled.Charsmap:
        return _charsmap(self.precompiled_charsmap)

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return apply_changes(text, precompiled.changes(self.charsmap, text[0]))

    @classmethod
    def from_json(cls, obj: dict, where: str):
        where = f"{where}: normalizer.Precompiled"
        blob = read_fields(obj, where, cls._FIELDS)["precompiled_charsmap"]
        _charsmap(blob, where)
        return cls(blob)

    def to_json(self) -> dict:
        return {"type": "Precompiled", "precompiled_charsmap": self.precompiled_charsmap}


@lru_cache(maxsize=8)
def _charsmap(blob: str, where: str = "precompiled_charsmap") -> precompiled.Charsmap:
    try:
        raw = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        raise TokkitError(f"{where}: field 'precompiled_charsmap' is not base64") from None
    return precompiled.parse_charsmap(raw, f"{where}: field 'precompiled_charsmap'")


@dataclass(frozen=True)
class Sequence:
    """Normalizers applied in order (the origin of insertions stays the text's own).

    >>> Sequence((Strip(True, True), Prepend("▁"))).normalize(aligned(" a"))
    ('▁a', [(1, 2), (1, 2)])
    """

    normalizers: tuple

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        origin = _origin(text, origin)
        for n in self.normalizers:
            text = n.normalize(text, origin)
        return text

    @classmethod
    def from_json(cls, obj: dict, where: str):
        items = read_fields(obj, f"{where}: normalizer.Sequence", {"normalizers": ((list,), _REQUIRED)})["normalizers"]
        return cls(tuple(_from_json(item, where) for item in items))

    def to_json(self) -> dict:
        return {"type": "Sequence", "normalizers": [n.to_json() for n in self.normalizers]}


Normalizer = Union[NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Nmt, Strip, Replace, Prepend, BertNormalizer,
                   Precompiled, Sequence]
NORMALIZERS = {cls.__name__: cls for cls in (NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Nmt, Strip, Replace,
                                             Prepend, BertNormalizer, Precompiled, Sequence)}


def _from_json(obj, where: str) -> Normalizer:
    if not isinstance(obj, dict):
        raise TokkitError(f"{where}: normalizer must be an object, got {json_kind(obj)}")
    kind = obj.get("type")
    if kind not in NORMALIZERS:
        raise TokkitError(f"{where}: normalizer type {kind!r} is not supported ({', '.join(NORMALIZERS)})")
    return NORMALIZERS[kind].from_json(obj, where)


def normalizer_from_json(obj: dict | None, where: str) -> Normalizer | None:
    """The normalizer a tokenizer.json `normalizer` object describes (None for null).

    >>> normalizer_from_json({"type": "Strip", "strip_left": True, "strip_right": 1}, "t.json")
    Traceback (most recent call last):
    tokkit.errors.TokkitError: t.json: normalizer.Strip: field 'strip_right' must be true or false, got an integer
    """
    return None if obj is None else _from_json(obj, where)


def normalizer_to_json(normalizer: Normalizer | None) -> dict | None:
    """The `normalizer` object as tokenizers writes it.

    >>> normalizer_to_json(Replace({"Regex": " {2,}"}, " "))
    {'type': 'Replace', 'pattern': {'Regex': ' {2,}'}, 'content': ' '}
    """
    return None if normalizer is None else normalizer.to_json()
