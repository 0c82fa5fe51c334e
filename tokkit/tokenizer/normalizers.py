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
from typing import Union

from tokkit._native import unicode_tables as ut
from tokkit._native.pipeline import NormKind
from tokkit.errors import TokkitError
from tokkit.text.normalize import BertNorm, bert_alignments
from tokkit.tokenizer import precompiled
from tokkit.tokenizer.aligned import (
    Aligned,
    aligned,  # noqa: F401 (the doctests' way to make an Aligned string)
    apply_changes,
    code_points,
    has_flag,
    keep_chars,
    lowercased,
    origin_of,
    unicode_form,
)
from tokkit.tokenizer.component_json import REQUIRED, component_from_json, fields_of, read_fields, read_pattern
from tokkit.tokenizer.onig_regex import find_matches, finder, regex_of


def _simple(cls, obj: dict, where: str):
    return cls(**read_fields(obj, f"{where}: normalizer.{cls.__name__}", fields_of(cls)))


# ------------------------------------------------------------------------------------ components

class _NoFields:
    """JSON reading and writing of a normalizer that has no fields besides its type, and its compiled
    step (`_KIND`)."""

    @classmethod
    def from_json(cls, obj: dict, where: str):
        return _simple(cls, obj, where)

    def to_json(self) -> dict:
        return {"type": type(self).__name__}

    def native(self) -> list[dict]:
        """The compiled steps' descriptions (tokkit._native.pipeline.PipelineEncoder.build)."""
        return [{"kind": self._KIND}]


@dataclass(frozen=True)
class NFC(_NoFields):
    """Canonical decomposition, then composition (tokenizers' Unicode 9 tables).

    >>> NFC().normalize(aligned("e\\u0301"))
    ('é', [(0, 1)])
    """

    _KIND = NormKind.N_NFC
    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return unicode_form(text, compatibility=False, compose=True)


@dataclass(frozen=True)
class NFD(_NoFields):
    """Canonical decomposition with canonical ordering of the marks.

    >>> text, spans = NFD().normalize(aligned("\\u00e9"))
    >>> text == "e\\u0301", spans
    (True, [(0, 1), (0, 1)])
    """

    _KIND = NormKind.N_NFD
    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return unicode_form(text, compatibility=False, compose=False)


@dataclass(frozen=True)
class NFKC(_NoFields):
    """Compatibility decomposition, then canonical composition.

    >>> NFKC().normalize(aligned("ﬁ"))
    ('fi', [(0, 1), (0, 1)])
    """

    _KIND = NormKind.N_NFKC
    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return unicode_form(text, compatibility=True, compose=True)


@dataclass(frozen=True)
class NFKD(_NoFields):
    """Compatibility decomposition with canonical ordering.

    >>> NFKD().normalize(aligned("①"))[0]
    '1'
    """

    _KIND = NormKind.N_NFKD
    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return unicode_form(text, compatibility=True, compose=False)


@dataclass(frozen=True)
class Lowercase(_NoFields):
    """Rust's char::to_lowercase per character (no final-sigma rule; "İ" becomes two characters).

    >>> Lowercase().normalize(aligned("İA"))
    ('i̇a', [(0, 1), (0, 1), (1, 2)])
    """

    _KIND = NormKind.N_LOWER
    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return lowercased(text)


@dataclass(frozen=True)
class StripAccents(_NoFields):
    """Removes combining marks (Mn, Mc, Me of Unicode 9) without decomposing first.

    >>> StripAccents().normalize(aligned("é e\\u0301"))
    ('é e', [(0, 1), (1, 2), (2, 3)])
    """

    _KIND = NormKind.N_STRIP_ACCENTS
    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        return keep_chars(text, lambda c: not has_flag(c, ut.STRIP_ACCENT))


@dataclass(frozen=True)
class Nmt(_NoFields):
    """tokenizers' Nmt: drops some control characters and turns some spaces and separators into " ".

    >>> Nmt().normalize(aligned("a\\x01\\tb"))
    ('a b', [(0, 1), (2, 3), (3, 4)])
    """

    _KIND = NormKind.N_NMT
    _DROP = frozenset([*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F])
    _SPACE = frozenset([0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD])

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        kept = keep_chars(text, lambda c: ord(c) not in self._DROP)
        return apply_changes(kept, [(" " if ord(c) in self._SPACE else c, 0) for c in kept[0]])


@dataclass(frozen=True)
class Strip:
    """Removes leading and/or trailing whitespace (Rust's char::is_whitespace).

    >>> Strip(strip_left=True, strip_right=False).normalize(aligned(" a "))
    ('a ', [(1, 2), (2, 3)])
    """

    strip_left: bool
    strip_right: bool
    _FIELDS = {"strip_left": ((bool,), REQUIRED), "strip_right": ((bool,), REQUIRED)}

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        chars = text[0]
        lead = trail = 0
        while self.strip_left and lead < len(chars) and has_flag(chars[lead], ut.WHITESPACE):
            lead += 1
        while self.strip_right and trail < len(chars) and has_flag(chars[-1 - trail], ut.WHITESPACE):
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

    def native(self) -> list[dict]:
        return [{"kind": NormKind.N_STRIP, "strip_left": self.strip_left, "strip_right": self.strip_right}]


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
    _FIELDS = {"pattern": ((dict,), REQUIRED), "content": ((str,), REQUIRED)}

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        chars, spans = text
        if not chars:
            return text
        origin = origin_of(text, origin)
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

    def native(self) -> list[dict]:
        """A String pattern and " {2,}" are compiled; any other regex runs through its finder."""
        kind, text = next(iter(self.pattern.items()))
        content = code_points(self.content)
        if kind == "String":
            return [{"kind": NormKind.N_REPLACE, "pattern": code_points(text), "content": content}]
        if text == " {2,}":
            return [{"kind": NormKind.N_REPLACE, "collapse_spaces": True, "content": content}]
        return [{"kind": NormKind.N_PYTHON, "content": content, "finder": finder(self.pattern)}]


@dataclass(frozen=True)
class Prepend:
    """Puts `prepend` before a non-empty text; it and the first character take that character's span.

    >>> Prepend(prepend="▁").normalize(aligned("ab"))
    ('▁ab', [(0, 1), (0, 1), (1, 2)])
    """

    prepend: str
    _FIELDS = {"prepend": ((str,), REQUIRED)}

    def normalize(self, text: Aligned, origin: int | None = None) -> Aligned:
        chars, spans = text
        if not chars:
            return text
        # tokenizers transforms the first character into prepend + itself: the first new character
        # replaces it, the others (itself included) are insertions
        head = [(c, int(k > 0)) for k, c in enumerate(self.prepend)] + [(chars[0], 1)]
        new, new_spans = apply_changes((chars[:1], spans[:1]), head, origin=origin_of(text, origin))
        return new + chars[1:], new_spans + spans[1:]

    @classmethod
    def from_json(cls, obj: dict, where: str):
        return _simple(cls, obj, where)

    def to_json(self) -> dict:
        return {"type": "Prepend", "prepend": self.prepend}

    def native(self) -> list[dict]:
        return [{"kind": NormKind.N_PREPEND, "content": code_points(self.prepend)}]


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
    _FIELDS = {"clean_text": ((bool,), REQUIRED), "handle_chinese_chars": ((bool,), REQUIRED),
               "strip_accents": ((bool, type(None)), None), "lowercase": ((bool,), REQUIRED)}

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

    def native(self) -> list[dict]:
        options = self.options
        return [{"kind": NormKind.N_BERT, "clean_text": options.clean_text,
                 "handle_chinese_chars": options.handle_chinese_chars, "strip_accents": options.strips_accents,
                 "lowercase": options.lowercase}]


@dataclass(frozen=True)
class Precompiled:
    """SentencePiece's precompiled_charsmap (base64, as in tokenizer.json); see tokkit.tokenizer.precompiled.

    >>> p = Precompiled(base64.b64encode(precompiled.build_charsmap({"ﬁ": "fi"})).decode())
    >>> p.normalize(aligned("ﬁx"))
    ('fix', [(0, 1), (0, 1), (1, 2)])
    """

    precompiled_charsmap: str
    _FIELDS = {"precompiled_charsmap": ((str,), REQUIRED)}

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

    def native(self) -> list[dict]:
        charsmap = self.charsmap
        return [{"kind": NormKind.N_PRECOMPILED, "charsmap_parts": (charsmap.trie, charsmap.pool)}]


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
        origin = origin_of(text, origin)
        for n in self.normalizers:
            text = n.normalize(text, origin)
        return text

    @classmethod
    def from_json(cls, obj: dict, where: str):
        items = read_fields(obj, f"{where}: normalizer.Sequence", {"normalizers": ((list,), REQUIRED)})["normalizers"]
        return cls(tuple(component_from_json(NORMALIZERS, item, where, "normalizer") for item in items))

    def to_json(self) -> dict:
        return {"type": "Sequence", "normalizers": [n.to_json() for n in self.normalizers]}

    def native(self) -> list[dict]:
        return [step for n in self.normalizers for step in n.native()]


Normalizer = Union[NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Nmt, Strip, Replace, Prepend, BertNormalizer,
                   Precompiled, Sequence]
NORMALIZERS = {cls.__name__: cls for cls in (NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Nmt, Strip, Replace,
                                             Prepend, BertNormalizer, Precompiled, Sequence)}


def normalizer_from_json(obj: dict | None, where: str) -> Normalizer | None:
    """The normalizer a tokenizer.json `normalizer` object describes (None for null).

    >>> normalizer_from_json({"type": "Strip", "strip_left": True, "strip_right": 1}, "t.json")
    Traceback (most recent call last):
    tokkit.errors.TokkitError: t.json: normalizer.Strip: field 'strip_right' must be true or false, got an integer
    """
    return None if obj is None else component_from_json(NORMALIZERS, obj, where, "normalizer")


def normalizer_to_json(normalizer: Normalizer | None) -> dict | None:
    """The `normalizer` object as tokenizers writes it.

    >>> normalizer_to_json(Replace({"Regex": " {2,}"}, " "))
    {'type': 'Replace', 'pattern': {'Regex': ' {2,}'}, 'content': ' '}
    """
    return None if normalizer is None else normalizer.to_json()
