"""Pre-tokenizers of a tokenizer.json, each with its readable twin of tokenizers' splitting and offsets.

A twin's `pre_tokenize(pieces)` takes the current pieces, Aligned strings as in
tokkit.tokenizer.normalizers (each character with its span in the original text), and splits each
one as tokenizers does, dropping empty pieces. (The method is not called `split`: Metaspace has a JSON field
of that name.)

Metaspace's "first" scheme prepends only to a piece whose original offset is 0. tokenizers keeps
that offset for each piece; every piece a pre-tokenizer sees is a slice (tokenizers slices the
normalized text even when no added token splits it), and a slice's offset is where its first
character's span starts, so that is what the twin reads (after a normalizer stripped "  a", the
piece starts at 2 and gets no prefix, as in tokenizers).

>>> p = pre_tokenizer_from_json({"type": "Sequence", "pretokenizers": [
...     {"type": "WhitespaceSplit"}, {"type": "Digits", "individual_digits": True}]}, "t.json")
>>> p.pre_tokenize([aligned("ab 12")])
[('ab', [(0, 1), (1, 2)]), ('1', [(3, 4)]), ('2', [(4, 5)])]
>>> pre_tokenizer_to_json(p)["pretokenizers"][1]
{'type': 'Digits', 'individual_digits': True}
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from tokkit._native import unicode_tables as ut
from tokkit._native.byte_symbols import bytes_to_unicode
from tokkit._native.patterns import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN, QWEN2_PATTERN
from tokkit._native.pipeline import SCANNER_FAMILIES, Behavior, PreKind, PrependScheme, ScanKind
from tokkit.errors import TokkitError
from tokkit.text.normalize import BertNorm, bert_split
from tokkit.text.pretokenize import gpt2_spans
from tokkit.tokenizer.aligned import Aligned, aligned, apply_changes, code_points, unicode_data
from tokkit.tokenizer.component_json import REQUIRED, component_from_json, read_fields, read_pattern
from tokkit.tokenizer.normalizers import Prepend
from tokkit.tokenizer.onig_regex import finder, regex_of
from tokkit.tokenizer.splitting import BEHAVIORS, char_matches, cut, regex_matches, split_by

PREPEND_SCHEMES = {"always": PrependScheme.PS_ALWAYS, "first": PrependScheme.PS_FIRST,
                   "never": PrependScheme.PS_NEVER}
BEHAVIOR_KINDS = dict(zip(BEHAVIORS, (Behavior.B_REMOVED, Behavior.B_ISOLATED, Behavior.B_MERGED_PREVIOUS,
                                      Behavior.B_MERGED_NEXT, Behavior.B_CONTIGUOUS)))
# The Split patterns the compiled code scans without a regex engine (pattern_scan.hpp),
# by the text tokenizer.json files spell them in
SCANNERS = {GPT2_PATTERN: "gpt2", CL100K_PATTERN: "cl100k", QWEN2_PATTERN: "qwen2", O200K_PATTERN: "o200k"}
# DeepSeek V3's three Split patterns (its file spells \r and \n as the chars themselves), which
# pipeline_scan.hpp scans as their character classes
_DEEPSEEK_MAIN = ("[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
                  " ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+")
CLASS_SCANNERS = {
    "\\p{N}{1,3}": ScanKind.SCAN_DIGITS3,
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+": ScanKind.SCAN_KANA_HAN,
    _DEEPSEEK_MAIN: ScanKind.SCAN_DEEPSEEK,
    _DEEPSEEK_MAIN.replace("\r", "\\r").replace("\n", "\\n"): ScanKind.SCAN_DEEPSEEK,
}
_NO_SPLIT = BertNorm(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=False)

__all__ = ["aligned", "pre_tokenizer_from_json", "pre_tokenizer_to_json", "PreTokenizer"]


class _Base:
    """What every pre-tokenizer shares: pre_tokenize (the twin) over split_one (one piece)."""

    def pre_tokenize(self, pieces: list[Aligned]) -> list[Aligned]:
        """The non-empty pieces after this pre-tokenizer.

        >>> WhitespaceSplit().pre_tokenize([aligned("a b"), ("", [])])
        [('a', [(0, 1)]), ('b', [(2, 3)])]
        """
        return [out for piece in pieces if piece[0] for out in self.split_one(piece) if out[0]]

    @classmethod
    def from_json(cls, obj: dict, where: str):
        return cls(**read_fields(obj, f"{where}: pre_tokenizer.{cls.__name__}", getattr(cls, "_FIELDS", {})))


def _behavior(value: str, where: str) -> str:
    if value not in BEHAVIORS:
        raise TokkitError(f"{where}: field 'behavior' must be one of {', '.join(BEHAVIORS)}, got {value!r}")
    return value


def _flagged(bit: int):
    flags = unicode_data().flags
    return lambda ch: bool(flags[ord(ch)] & bit)


# ------------------------------------------------------------------------------------ components

@dataclass(frozen=True)
class Metaspace(_Base):
    """Spaces become `replacement`, which is prepended (always, on the text's first piece, or never)
    and starts each new piece when `split`.

    >>> Metaspace("▁", "always", True).pre_tokenize([aligned("hi  you")])
    [('▁hi', [(0, 1), (0, 1), (1, 2)]), ('▁', [(2, 3)]), ('▁you', [(3, 4), (4, 5), (5, 6), (6, 7)])]
    """

    replacement: str
    prepend_scheme: str
    split: bool

    def split_one(self, piece: Aligned) -> list[Aligned]:
        text, spans = piece
        text = text.replace(" ", self.replacement)
        first = self.prepend_scheme == "always" or (self.prepend_scheme == "first" and spans[0][0] == 0)
        if first and not text.startswith(self.replacement):
            text, spans = Prepend(self.replacement).normalize((text, spans))
        if not self.split:
            return [(text, spans)]
        matches = char_matches(text, lambda c: c == self.replacement)
        return cut((text, spans), split_by(matches, "MergedWithNext"))

    @classmethod
    def from_json(cls, obj: dict, where: str):
        where = f"{where}: pre_tokenizer.Metaspace"
        f = read_fields(obj, where, {"replacement": ((str,), REQUIRED), "prepend_scheme": ((str,), "always"),
                                     "split": ((bool,), True), "add_prefix_space": ((bool,), None),
                                     "str_rep": ((str,), None)})
        if len(f["replacement"]) != 1:
            raise TokkitError(f"{where}: field 'replacement' must be one character, got {f['replacement']!r}")
        if f["prepend_scheme"] not in PREPEND_SCHEMES:
            raise TokkitError(f"{where}: field 'prepend_scheme' must be one of {', '.join(PREPEND_SCHEMES)}, "
                              f"got {f['prepend_scheme']!r}")
        if f["add_prefix_space"] is False and f["prepend_scheme"] != "never":  # the legacy field must agree
            raise TokkitError(f"{where}: field 'add_prefix_space' is false but prepend_scheme is "
                              f"{f['prepend_scheme']!r}")
        return cls(f["replacement"], f["prepend_scheme"], f["split"])

    def to_json(self) -> dict:
        return {"type": "Metaspace", "replacement": self.replacement, "prepend_scheme": self.prepend_scheme,
                "split": self.split}

    def native(self) -> list[dict]:
        """The compiled steps' descriptions (tokkit._native.pipeline.PipelineEncoder.build)."""
        return [{"kind": PreKind.P_METASPACE, "replacement": ord(self.replacement),
                 "prepend_scheme": PREPEND_SCHEMES[self.prepend_scheme], "split": self.split}]


@dataclass(frozen=True)
class Split(_Base):
    """Splits on a pattern ({"String": text} or {"Regex": pattern}) with one of BEHAVIORS; `invert`
    splits on what the pattern does not match.

    >>> Split({"Regex": "\\\\d+"}, "Isolated", False).pre_tokenize([aligned("a12b")])
    [('a', [(0, 1)]), ('12', [(1, 2), (2, 3)]), ('b', [(3, 4)])]
    """

    pattern: dict
    behavior: str
    invert: bool
    _FIELDS = {"pattern": ((dict,), REQUIRED), "behavior": ((str,), REQUIRED), "invert": ((bool,), REQUIRED)}

    def split_one(self, piece: Aligned) -> list[Aligned]:
        matches = regex_matches(regex_of(self.pattern), piece[0], self.pattern)
        if self.invert:
            matches = [(span, not m) for span, m in matches]
        return cut(piece, split_by(matches, self.behavior))

    @classmethod
    def from_json(cls, obj: dict, where: str):
        where = f"{where}: pre_tokenizer.Split"
        f = read_fields(obj, where, cls._FIELDS)
        pattern = read_pattern(f["pattern"], where)
        split = cls(pattern, _behavior(f["behavior"], where), f["invert"])
        if split.scanner is None and split.class_scan is None:  # the scanned patterns are known good
            regex_of(pattern, where)  # (compiling cl100k's takes a tenth of a second)
        return split

    def to_json(self) -> dict:
        return {"type": "Split", "pattern": dict(self.pattern), "behavior": self.behavior, "invert": self.invert}

    @property
    def scanner(self) -> str | None:
        """The compiled scanner of a regex pattern ("gpt2", "cl100k", "qwen2", "o200k"), or None."""
        return SCANNERS.get(self.pattern.get("Regex"))

    @property
    def class_scan(self) -> ScanKind | None:
        """The compiled class scanner of a regex pattern (CLASS_SCANNERS: DeepSeek V3's), or None."""
        return CLASS_SCANNERS.get(self.pattern.get("Regex"))

    def native(self) -> list[dict]:
        """A String pattern and the scanned regexes are compiled; any other regex runs through its finder."""
        step = {"behavior": BEHAVIOR_KINDS[self.behavior], "invert": self.invert}
        if self.class_scan is not None:
            return [{**step, "kind": PreKind.P_SPLIT_SCAN, "scan": self.class_scan}]
        if "String" in self.pattern:
            return [{**step, "kind": PreKind.P_SPLIT_STRING, "pattern": code_points(self.pattern["String"])}]
        if self.scanner is not None:
            return [{**step, "kind": PreKind.P_SPLIT_FAMILY, "family": SCANNER_FAMILIES[self.scanner]}]
        return [{**step, "kind": PreKind.P_SPLIT_PYTHON, "finder": finder(self.pattern)}]


@dataclass(frozen=True)
class ByteLevel(_Base):
    """GPT-2's pre-tokenizer: an optional space before each piece, the GPT-2 pattern (with
    tokenizers' Unicode classes), then each character spelled as the byte symbols of its UTF-8, all
    of them keeping its span. trim_offsets acts after the model (tokkit.tokenizer.trim).

    >>> ByteLevel(True, True, True).pre_tokenize([aligned("hé!")])
    [('ĠhÃ©', [(0, 1), (0, 1), (1, 2), (1, 2)]), ('!', [(2, 3)])]
    """

    add_prefix_space: bool
    trim_offsets: bool
    use_regex: bool
    _FIELDS = {"add_prefix_space": ((bool,), REQUIRED), "trim_offsets": ((bool,), REQUIRED),
               "use_regex": ((bool,), True)}

    def pre_tokenize(self, pieces: list[Aligned]) -> list[Aligned]:
        # tokenizers splits every piece first, then turns every piece into byte symbols
        return [byte_symbols(p) for p in super().pre_tokenize(pieces)]

    def split_one(self, piece: Aligned) -> list[Aligned]:
        if self.add_prefix_space and not piece[0].startswith(" "):
            piece = Prepend(" ").normalize(piece)
        if not self.use_regex:
            return [piece]
        return cut(piece, gpt2_spans(piece[0], classes="tokenizers"))

    def to_json(self) -> dict:
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space, "trim_offsets": self.trim_offsets,
                "use_regex": self.use_regex}

    def native(self) -> list[dict]:
        return [{"kind": PreKind.P_BYTELEVEL, "add_prefix_space": self.add_prefix_space, "use_regex": self.use_regex}]


def byte_symbols(piece: Aligned) -> Aligned:
    """Each character as the GPT-2 symbols of its UTF-8 bytes, all with the character's span.

    >>> byte_symbols(aligned(" é"))
    ('ĠÃ©', [(0, 1), (1, 2), (1, 2)])
    """
    table = bytes_to_unicode()
    changes = [(table[b], int(k > 0)) for ch in piece[0] for k, b in enumerate(ch.encode("utf-8"))]
    return apply_changes(piece, changes)


@dataclass(frozen=True)
class Whitespace(_Base):
    """tokenizers' `\\w+|[^\\w\\s]+`: runs of word characters and runs of other non-space characters.

    >>> [p for p, _ in Whitespace().pre_tokenize([aligned("it's 2 good!!")])]
    ['it', "'", 's', '2', 'good', '!!']
    """

    def split_one(self, piece: Aligned) -> list[Aligned]:
        flags = unicode_data().flags
        kinds = [0 if flags[ord(c)] & ut.REGEX_SPACE else 1 if flags[ord(c)] & ut.WORD else 2 for c in piece[0]]
        runs, start = [], 0
        for i in range(1, len(kinds) + 1):
            if i == len(kinds) or kinds[i] != kinds[start]:
                if kinds[start]:
                    runs.append((start, i))
                start = i
        return cut(piece, runs)

    def to_json(self) -> dict:
        return {"type": "Whitespace"}

    def native(self) -> list[dict]:
        return [{"kind": PreKind.P_WHITESPACE}]


@dataclass(frozen=True)
class WhitespaceSplit(_Base):
    """Splits on whitespace (Rust's char::is_whitespace), dropping it.

    >>> [p for p, _ in WhitespaceSplit().pre_tokenize([aligned("a\\u00a0b  c")])]
    ['a', 'b', 'c']
    """

    def split_one(self, piece: Aligned) -> list[Aligned]:
        return cut(piece, split_by(char_matches(piece[0], _flagged(ut.WHITESPACE)), "Removed"))

    def to_json(self) -> dict:
        return {"type": "WhitespaceSplit"}

    def native(self) -> list[dict]:
        return [{"kind": PreKind.P_WHITESPACE_SPLIT}]


@dataclass(frozen=True)
class Punctuation(_Base):
    """Splits on each punctuation character (ASCII punctuation and Unicode P*) with one of BEHAVIORS.

    >>> [p for p, _ in Punctuation("Isolated").pre_tokenize([aligned("a,b")])]
    ['a', ',', 'b']
    """

    behavior: str = "Isolated"

    def split_one(self, piece: Aligned) -> list[Aligned]:
        return cut(piece, split_by(char_matches(piece[0], _flagged(ut.PUNCT)), self.behavior))

    @classmethod
    def from_json(cls, obj: dict, where: str):
        where = f"{where}: pre_tokenizer.Punctuation"
        return cls(_behavior(read_fields(obj, where, {"behavior": ((str,), "Isolated")})["behavior"], where))

    def to_json(self) -> dict:
        return {"type": "Punctuation", "behavior": self.behavior}

    def native(self) -> list[dict]:
        return [{"kind": PreKind.P_PUNCTUATION, "behavior": BEHAVIOR_KINDS[self.behavior]}]


@dataclass(frozen=True)
class Digits(_Base):
    """Splits numeric characters (Rust's char::is_numeric) from the rest, one by one when individual_digits.

    >>> [p for p, _ in Digits(False).pre_tokenize([aligned("a12b")])]
    ['a', '12', 'b']
    >>> [p for p, _ in Digits(True).pre_tokenize([aligned("12")])]
    ['1', '2']
    """

    individual_digits: bool
    _FIELDS = {"individual_digits": ((bool,), REQUIRED)}

    def split_one(self, piece: Aligned) -> list[Aligned]:
        behavior = "Isolated" if self.individual_digits else "Contiguous"
        return cut(piece, split_by(char_matches(piece[0], _flagged(ut.NUMERIC)), behavior))

    def to_json(self) -> dict:
        return {"type": "Digits", "individual_digits": self.individual_digits}

    def native(self) -> list[dict]:
        return [{"kind": PreKind.P_DIGITS, "individual_digits": self.individual_digits}]


@dataclass(frozen=True)
class CharDelimiterSplit(_Base):
    """Splits on one delimiter character, dropping it.

    >>> [p for p, _ in CharDelimiterSplit("|").pre_tokenize([aligned("a|b")])]
    ['a', 'b']
    """

    delimiter: str

    def split_one(self, piece: Aligned) -> list[Aligned]:
        return cut(piece, split_by(char_matches(piece[0], lambda c: c == self.delimiter), "Removed"))

    @classmethod
    def from_json(cls, obj: dict, where: str):
        where = f"{where}: pre_tokenizer.CharDelimiterSplit"
        delimiter = read_fields(obj, where, {"delimiter": ((str,), REQUIRED)})["delimiter"]
        if len(delimiter) != 1:
            raise TokkitError(f"{where}: field 'delimiter' must be one character, got {delimiter!r}")
        return cls(delimiter)

    def to_json(self) -> dict:
        return {"type": "CharDelimiterSplit", "delimiter": self.delimiter}

    def native(self) -> list[dict]:
        return [{"kind": PreKind.P_SPLIT_STRING, "pattern": code_points(self.delimiter),
                 "behavior": Behavior.B_REMOVED}]


@dataclass(frozen=True)
class BertPreTokenizer(_Base):
    """BERT's split: whitespace dropped, each punctuation character alone (tokkit.text.normalize).

    >>> [p for p, _ in BertPreTokenizer().pre_tokenize([aligned("Hi, you")])]
    ['Hi', ',', 'you']
    """

    def split_one(self, piece: Aligned) -> list[Aligned]:
        return cut(piece, [span for _, span in bert_split(piece[0], _NO_SPLIT)])

    def to_json(self) -> dict:
        return {"type": "BertPreTokenizer"}

    def native(self) -> list[dict]:
        return [{"kind": PreKind.P_BERT}]


@dataclass(frozen=True)
class Sequence(_Base):
    """Pre-tokenizers applied in order, each to every piece the previous one left.

    >>> [p for p, _ in Sequence((WhitespaceSplit(), Punctuation())).pre_tokenize([aligned("a, b")])]
    ['a', ',', 'b']
    """

    pretokenizers: tuple

    def pre_tokenize(self, pieces: list[Aligned]) -> list[Aligned]:
        for p in self.pretokenizers:
            pieces = p.pre_tokenize(pieces)
        return pieces

    @classmethod
    def from_json(cls, obj: dict, where: str):
        items = read_fields(obj, f"{where}: pre_tokenizer.Sequence", {"pretokenizers": ((list,), REQUIRED)})
        return cls(tuple(component_from_json(PRE_TOKENIZERS, item, where, "pre_tokenizer")
                         for item in items["pretokenizers"]))

    def to_json(self) -> dict:
        return {"type": "Sequence", "pretokenizers": [p.to_json() for p in self.pretokenizers]}

    def native(self) -> list[dict]:
        return [step for p in self.pretokenizers for step in p.native()]


PreTokenizer = Union[Metaspace, Split, ByteLevel, Whitespace, WhitespaceSplit, Punctuation, Digits,
                     CharDelimiterSplit, BertPreTokenizer, Sequence]
PRE_TOKENIZERS = {cls.__name__: cls for cls in (Metaspace, Split, ByteLevel, Whitespace, WhitespaceSplit, Punctuation,
                                                Digits, CharDelimiterSplit, BertPreTokenizer, Sequence)}


def pre_tokenizer_from_json(obj: dict | None, where: str) -> PreTokenizer | None:
    """The pre-tokenizer a tokenizer.json `pre_tokenizer` object describes (None for null).

    >>> pre_tokenizer_from_json({"type": "Digits"}, "t.json")
    Traceback (most recent call last):
    tokkit.errors.TokkitError: t.json: pre_tokenizer.Digits: field 'individual_digits' is missing
    """
    return None if obj is None else component_from_json(PRE_TOKENIZERS, obj, where, "pre_tokenizer")


def pre_tokenizer_to_json(pre_tokenizer: PreTokenizer | None) -> dict | None:
    """The `pre_tokenizer` object as tokenizers writes it.

    >>> pre_tokenizer_to_json(ByteLevel(False, True, True))
    {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': True}
    """
    return None if pre_tokenizer is None else pre_tokenizer.to_json()
