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
    (Ruby syntax): ^ and $ match at every line, (?m) means dot-all, \\h is a hex digit, and
    \\p{L}, \\p{N}, \\s, \\S take Oniguruma's (older) Unicode classes. Other classes (\\w, \\d, \\b,
    other \\p{...}) keep `regex`'s newer Unicode: they differ from tokenizers on recent characters.

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


def _translate(source: str) -> str:
    """Oniguruma (Ruby syntax) -> `regex`: the constructs whose meaning differs."""
    out, i, depth = [], 0, 0  # depth: inside a character class
    while i < len(source):
        ch = source[i]
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
    return "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in runs)


def _class(name: str, depth: int, negated: bool = False) -> str:
    inner = _onig_ranges(name)
    return inner if depth else f"[{'^' if negated else ''}{inner}]"


_ESCAPES = {"\\h": "[0-9a-fA-F]", "\\H": "[^0-9a-fA-F]"}
_ESCAPES_IN_CLASS = {"\\h": "0-9a-fA-F"}


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
