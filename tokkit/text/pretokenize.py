"""Pre-tokenizers: the GPT-2 pattern (a compiled scanner, proven equal to `regex`) and any pattern.

The scanner knows two Unicode flavours of \\p{L}, \\p{N} and \\s: classes="regex" (the `regex`
package, the default) and classes="tokenizers" (tokenizers' own regex engine, whose older Unicode
treats ~17,000 recent letters and ~340 digits as "other"; tiktoken's engine agrees with it: use it
to match tokenizers' ByteLevel or tiktoken exactly).

>>> split_gpt2("I'm here")
['I', "'m", ' here']
>>> split_regex("a1 b", r"\\d|\\w")
['a', '1', 'b']
"""
from __future__ import annotations

from functools import lru_cache

import regex

from tokkit._native import regex_limit
from tokkit._native.patterns import GPT2_PATTERN as GPT2_PATTERN
from tokkit._native.text_api import gpt2_spans_str, gpt2_split_str


@lru_cache(maxsize=64)
def compiled(pattern: str) -> regex.Pattern:
    """`pattern` compiled once (patterns are reused for every line)."""
    return regex.compile(pattern)


def split_regex(text: str, pattern: str = GPT2_PATTERN) -> list[str]:
    """All matches of `pattern` in `text`, as `regex.findall` (the general path), within the time
    limit of tokkit._native.regex_limit.

    >>> split_regex("ab  c")
    ['ab', ' ', ' c']
    """
    return regex_limit.findall(compiled(pattern), text)


def _tokenizers_classes(classes: str) -> bool:
    if classes not in ("regex", "tokenizers"):
        raise ValueError(f"classes must be 'regex' or 'tokenizers', not {classes!r}")
    return classes == "tokenizers"


def split_gpt2(text: str, *, classes: str = "regex") -> list[str]:
    """The GPT-2 pattern's pieces of `text`, by the compiled scanner (== split_regex(text)).

    >>> split_gpt2("they'll  go!")
    ['they', "'ll", ' ', ' go', '!']
    """

    return gpt2_split_str(text, _tokenizers_classes(classes))


def gpt2_spans(text: str, *, classes: str = "regex") -> list[tuple[int, int]]:
    """(start, end) code-point offsets of the GPT-2 pattern's pieces of `text`.

    >>> gpt2_spans("a b")
    [(0, 1), (1, 3)]
    """

    return gpt2_spans_str(text, _tokenizers_classes(classes))
