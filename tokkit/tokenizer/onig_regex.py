"""tokenizer.json regexes read as tokenizers' engine (Oniguruma) reads them, run on the `regex` package.

Split, Replace and the Replace decoder hold patterns as {"String": s} or {"Regex": r}; `regex_of`
compiles either, and `find_matches` iterates matches as Oniguruma's find_iter does, under
tokkit._native.regex_limit's time limit.

>>> find_matches(regex_of({"Regex": "x*"}), "axb")
[(0, 0), (1, 2), (3, 3)]
"""
from __future__ import annotations

import json
import time
from functools import lru_cache
from typing import Tuple

import regex

from tokkit._native import regex_limit
from tokkit._native import unicode_tables as ut
from tokkit.errors import TokkitError

Span = Tuple[int, int]


def regex_of(pattern: dict, where: str = "pattern") -> regex.Pattern:
    """A {"String"|"Regex"} pattern compiled for the `regex` package, read as Oniguruma reads it
    (Ruby syntax): ^ and $ match at every line, \\Z also before a final newline (\\z only at the
    end), (?m) means dot-all, \\h is a hex digit, and
    \\p{L}, \\p{N}, \\s, \\S, \\w, \\W, \\d, \\D, \\b and \\B take Oniguruma's classes (its \\w holds
    letters, marks, numbers and _, not the joiners U+200C/U+200D that `regex`'s holds). Other
    \\p{...} classes keep `regex`'s newer Unicode: they differ from tokenizers on recent characters.

    >>> [m.span() for m in regex_of({"Regex": "^a"}).finditer("a\\na")]
    [(0, 1), (2, 3)]
    """
    try:
        return _compile(next(iter(pattern)), next(iter(pattern.values())))
    except (regex.error, RecursionError, OverflowError) as exc:
        raise TokkitError(f"{where}: field 'pattern' is not a valid regular expression: {exc}") from None


@lru_cache(maxsize=256)
def _compile(kind: str, source: str) -> regex.Pattern:
    if kind == "String":
        return regex.compile(regex.escape(source))
    return regex.compile(_translate(source), regex.MULTILINE | regex.V0)


ONIG_MAX_REPEAT = 100_000  # Oniguruma's ONIG_MAX_REPEAT_NUM: a larger count is an error there
_INTERVAL = regex.compile(r"\{(\d*)(?:,(\d*))?\}")


def _translate(source: str) -> str:
    """Oniguruma (Ruby syntax) -> `regex`: the constructs whose meaning differs, and its limit on
    repeat counts (`regex` would build a{2147483647} and run out of memory)."""
    out, i, depth = [], 0, 0  # depth: inside a character class
    while i < len(source):
        ch = source[i]
        if ch == "{" and not depth:
            interval = _INTERVAL.match(source, i)
            counts = [int(c) for c in interval.groups() if c] if interval else []
            if max(counts, default=0) > ONIG_MAX_REPEAT:
                raise regex.error(f"the repeat count {max(counts):,} is above Oniguruma's limit of "
                                  f"{ONIG_MAX_REPEAT:,} (tokenizers refuses it too)")
        if ch == "\\" and i + 1 < len(source):
            token = source[i:i + 2]
            if source.startswith(("\\p{L}", "\\p{N}"), i):
                out.append(_class(source[i + 3], depth))
                i += 5
                continue
            if token == "\\s" or (token == "\\S" and not depth):
                out.append(_class("S", depth, negated=token == "\\S"))
                i += 2
                continue
            if token in _ONIG_CLASSES:
                out.append(_onig_class(token, depth))
                i += 2
                continue
            out.append(_ESCAPES.get(token, token) if not depth else _ESCAPES_IN_CLASS.get(token, token))
            i += 2
            continue
        if ch == "^" and not depth:
            out.append("(?:^(?!\\Z))")  # Oniguruma's ^ does not match at the end, after a final newline
            i += 1
            continue
        if ch == "[":
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
        elif ch == "(" and not depth and source.startswith("(?", i):
            j = i + 2
            while j < len(source) and source[j] in "imx-":
                j += 1
            if j < len(source) and source[j] in ":)":
                out.append("(?" + source[i + 2:j].replace("m", "s"))
                i = j
                continue
        out.append(ch)
        i += 1
    return "".join(out)


@lru_cache(maxsize=4)
def _onig_ranges(name: str) -> str:
    """A class's ranges as Oniguruma sees it (the gpt2_tokenizers section), for inside [...]."""
    with open(ut.TABLES, encoding="utf-8") as f:
        runs = json.load(f)["gpt2_tokenizers"][name]
    return _ranges(runs)


def _class(name: str, depth: int, negated: bool = False) -> str:
    inner = _onig_ranges(name)
    return inner if depth else f"[{'^' if negated else ''}{inner}]"


_ONIG_CLASSES = ("\\w", "\\W", "\\d", "\\D", "\\b", "\\B")


def _onig_class(token: str, depth: int) -> str:
    """\\w, \\W, \\d, \\D, \\b or \\B as Oniguruma reads it (\\b and \\B only outside [...], where
    they are word boundaries)."""
    if token in ("\\b", "\\B"):
        if depth:
            return token
        w = f"[{_ranges(_word_runs(inside=False))}]"
        at_edge = f"(?<={w})(?!{w})|(?<!{w})(?={w})"
        return f"(?:{at_edge})" if token == "\\b" else f"(?!{at_edge})"
    runs = _word_runs(inside=bool(depth)) if token in ("\\w", "\\W") else _digit_runs()
    if token in ("\\W", "\\D"):
        runs = _complement(runs)
    return _ranges(runs) if depth else f"[{_ranges(runs)}]"


# Oniguruma's \w against the Whitespace pre-tokenizer's (the tables' norm.word, probed from
# tokenizers): it lacks the joiners, and outside [...] it also holds Latin-1's superscripts and
# fractions (its Latin-1 table says so; inside a class its Unicode ranges decide). A test probes
# every code point both ways.
_NOT_ONIG_WORD = {0x200C, 0x200D}
_ONIG_WORD_LATIN1 = {0xB2, 0xB3, 0xB9, 0xBC, 0xBD, 0xBE}


@lru_cache(maxsize=2)
def _word_runs(inside: bool) -> tuple[tuple[int, int], ...]:
    with open(ut.TABLES, encoding="utf-8") as f:
        runs = json.load(f)["norm"]["word"]
    chars = {c for lo, hi in runs for c in range(lo, hi + 1)} - _NOT_ONIG_WORD
    return _runs_of(chars if inside else chars | _ONIG_WORD_LATIN1)


@lru_cache(maxsize=1)
def _digit_runs() -> tuple[tuple[int, int], ...]:
    """Oniguruma's \\d: the decimal digits among its \\p{N} (`regex` knows newer ones)."""
    with open(ut.TABLES, encoding="utf-8") as f:
        runs = json.load(f)["gpt2_tokenizers"]["N"]
    digit = regex.compile(r"\d")
    return _runs_of({c for lo, hi in runs for c in range(lo, hi + 1) if digit.match(chr(c))})


def _runs_of(chars: set[int]) -> tuple[tuple[int, int], ...]:
    runs: list[list[int]] = []
    for c in sorted(chars):
        if runs and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return tuple((lo, hi) for lo, hi in runs)


def _complement(runs) -> tuple[tuple[int, int], ...]:
    out, at = [], 0
    for lo, hi in runs:
        if at < lo:
            out.append((at, lo - 1))
        at = hi + 1
    return tuple(out + ([(at, 0x10FFFF)] if at <= 0x10FFFF else []))


def _ranges(runs) -> str:
    return "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in runs)


# Oniguruma's \Z also matches before a final newline (Python's \Z is Oniguruma's \z, the very end)
_ESCAPES = {"\\h": "[0-9a-fA-F]", "\\H": "[^0-9a-fA-F]", "\\Z": "(?=\\n?\\Z)", "\\z": "\\Z"}
_ESCAPES_IN_CLASS = {"\\h": "0-9a-fA-F", "\\Z": "Z", "\\z": "z"}  # in [...] the anchors are their letters


def finder(pattern: dict):
    """text -> find_matches(...) for a JSON pattern: the callback the compiled pipeline runs for a
    pattern it has no scanner of its own for.

    >>> finder({"Regex": "b+"})("abba")
    [(1, 3)]
    """
    compiled = regex_of(pattern)
    return lambda text: find_matches(compiled, text, pattern)


def find_matches(pattern: regex.Pattern, text: str, source: dict | None = None) -> list[Span]:
    """Non-overlapping matches as Oniguruma's find_iter gives them: an empty match right where the
    previous match ended is skipped (the search moves one character on). A runaway pattern fails
    within tokkit._native.regex_limit's time limit (`source`, the JSON pattern, names it).

    >>> find_matches(regex.compile("x*"), "axb")
    [(0, 0), (1, 2), (3, 3)]
    """
    out: list[Span] = []
    pos, last_end = 0, None
    limit = regex_limit.time_limit(len(text))
    deadline = time.monotonic() + limit
    while pos <= len(text):
        try:
            m = pattern.search(text, pos, timeout=max(deadline - time.monotonic(), 1e-3))
        except TimeoutError:
            raise TokkitError(f"the pattern {source or pattern.pattern!r} is too slow on this input: it ran past "
                              f"its limit of {limit:.2f} s on {len(text):,} characters") from None
        if m is None:
            break
        start, end = m.span()
        if start == end and end == last_end:
            pos += 1
            continue
        out.append((start, end))
        pos = last_end = end
    return out
