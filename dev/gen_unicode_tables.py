"""Probe the pinned oracles for every code point and write tokkit/data/unicode_tables.json.

Run from the repository root with the test extras installed (tokenizers 0.23, regex):

    python dev/gen_unicode_tables.py

Runtime code never imports tokenizers: it reads the JSON this script writes (ranges and sparse maps,
nothing executable). Sections:

- gpt2.L / gpt2.N / gpt2.S: the classes \\p{L}, \\p{N} and \\s as the `regex` package defines them.
- bert.clean_remove: characters BertNormalizer(clean_text=True) deletes; bert.clean_space: those it
  turns into " ".
- bert.cjk: characters handle_chinese_chars pads with spaces.
- bert.split_space / bert.punct: characters BertPreTokenizer drops as whitespace / isolates as punctuation.
- bert.lower / bert.strip: per-character results of lowercase only and strip_accents only (sparse:
  only characters that change), as lists of code points. Both options together equal lowercasing
  each character of the strip result; this script checks that against the oracle for every code
  point, so that table is not stored.
Ranges are inclusive [first, last] pairs. Surrogates (U+D800..U+DFFF) are not probed: tokenizers
cannot receive them; the runtime treats them as "other" characters.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import regex
import tokenizers
from tokenizers import normalizers, pre_tokenizers

OUT = Path(__file__).resolve().parents[1] / "tokkit" / "data" / "unicode_tables.json"
ALL = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]


def ranges(cps) -> list[list[int]]:
    """Sorted code points -> inclusive [first, last] runs."""
    out: list[list[int]] = []
    for c in sorted(cps):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def regex_class(pattern: str) -> list[list[int]]:
    """Runs of a regex class, found in one pass over a string holding every code point at its index."""
    text = "".join(map(chr, range(0x110000)))
    return [[m.start(), m.end() - 1] for m in regex.finditer(pattern + "+", text)]


def normalizer(**flags) -> normalizers.BertNormalizer:
    base = dict(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    base.update(flags)
    return normalizers.BertNormalizer(**base)


def char_map(norm) -> list[list]:
    """Sparse per-character map: [[cp, [out cps...]], ...] for characters the normalizer changes."""
    out = []
    for c in ALL:
        s = norm.normalize_str(chr(c))
        if s != chr(c):
            out.append([c, [ord(x) for x in s]])
    return out


def check_composition(lower, strip, both) -> None:
    """strip_accents + lowercase must equal lowercase applied to each character of the strip result."""
    lo, st, bo = dict(map(tuple, lower)), dict(map(tuple, strip)), dict(map(tuple, both))
    for c in ALL:
        composed = [y for x in st.get(c, [c]) for y in lo.get(x, [x])]
        if composed != bo.get(c, [c]):
            raise SystemExit(f"strip+lower of U+{c:04X} is not lower(strip(c))")


def probe_bert() -> dict:
    clean = normalizer(clean_text=True)
    remove, space = [], []
    for c in ALL:
        s = clean.normalize_str(chr(c))
        if s == "":
            remove.append(c)
        elif s == " " and c != 0x20:
            space.append(c)
        elif s != chr(c):
            raise SystemExit(f"clean_text maps U+{c:04X} to {s!r}: not a removal or a space")
    chinese = normalizer(handle_chinese_chars=True)
    cjk = []
    for c in ALL:
        s = chinese.normalize_str(chr(c))
        if s == f" {chr(c)} ":
            cjk.append(c)
        elif s != chr(c):
            raise SystemExit(f"handle_chinese_chars maps U+{c:04X} to {s!r}")
    pre = pre_tokenizers.BertPreTokenizer()
    split_space, punct = [], []
    for c in ALL:
        pieces = [p for p, _ in pre.pre_tokenize_str(f"a{chr(c)}a")]
        if pieces == ["a", "a"]:
            split_space.append(c)
        elif pieces == ["a", chr(c), "a"]:
            punct.append(c)
        elif pieces != [f"a{chr(c)}a"]:
            raise SystemExit(f"BertPreTokenizer splits a U+{c:04X} a as {pieces!r}")
    lower, strip = char_map(normalizer(lowercase=True)), char_map(normalizer(strip_accents=True))
    check_composition(lower, strip, char_map(normalizer(strip_accents=True, lowercase=True)))
    return {
        "clean_remove": ranges(remove),
        "clean_space": ranges(space),
        "cjk": ranges(cjk),
        "split_space": ranges(split_space),
        "punct": ranges(punct),
        "lower": lower,
        "strip": strip,
    }


def main() -> None:
    data = {
        "source": f"tokenizers {tokenizers.__version__}, regex {regex.__version__}",
        "gpt2": {
            "L": regex_class(r"\p{L}"),
            "N": regex_class(r"\p{N}"),
            "S": regex_class(r"\s"),
        },
        "bert": probe_bert(),
    }
    tmp = OUT.with_suffix(".json.tmp")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, OUT)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
