"""A time limit on custom pre-tokenizer patterns: one that backtracks without end fails instead.

A pattern from a tokenizer.json or `--pattern` runs on the `regex` package, and some patterns
take exponential time on some texts (`(a|aa)+$` on "a" * 40 + "b"). Each search gets
BASE_SECONDS plus SECONDS_PER_CHAR for every character it scans: one second plus 10 µs a
character, tens of times what a sane pattern needs, so only a runaway one reaches it. Past the
limit the search stops and a TokkitError names the pattern.

>>> import regex
>>> [m.group() for m in finditer(regex.compile(r"\\w+"), "a bc", 0, 4)]
['a', 'bc']
>>> finditer(regex.compile(r"(a|aa)+$"), "a" * 60 + "b", 0, 61, base_seconds=0.01)
Traceback (most recent call last):
tokkit.errors.TokkitError: the pre-tokenizer pattern '(a|aa)+$' is too slow on this input: ...
"""
from __future__ import annotations

from tokkit.errors import TokkitError

BASE_SECONDS = 1.0
SECONDS_PER_CHAR = 1e-5


def time_limit(chars: int, base_seconds: float | None = None) -> float:
    """Seconds a search over `chars` characters may take."""
    return (BASE_SECONDS if base_seconds is None else base_seconds) + SECONDS_PER_CHAR * chars


def finditer(pattern, text: str, pos: int, endpos: int, *, base_seconds: float | None = None) -> list:
    """The matches of `pattern` in text[pos:endpos] (as `pattern.finditer`), within the time limit."""
    limit = time_limit(endpos - pos, base_seconds)
    try:
        return list(pattern.finditer(text, pos, endpos, timeout=limit))
    except TimeoutError:
        raise too_slow(pattern, endpos - pos, limit) from None


def findall(pattern, text: str, *, base_seconds: float | None = None) -> list:
    """`pattern.findall(text)` within the time limit."""
    limit = time_limit(len(text), base_seconds)
    try:
        return pattern.findall(text, timeout=limit)
    except TimeoutError:
        raise too_slow(pattern, len(text), limit) from None


def too_slow(pattern, chars: int, limit: float) -> TokkitError:
    return TokkitError(f"the pre-tokenizer pattern {pattern.pattern!r} is too slow on this input: "
                       f"it ran past its limit of {limit:.2f} s on {chars:,} characters, as a pattern that "
                       "backtracks exponentially does; simplify the pattern "
                       "(tokkit._native.regex_limit sets the limit)")
