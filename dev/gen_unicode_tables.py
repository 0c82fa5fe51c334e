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
- bert.lower / bert.strip / bert.strip_lower: per-character results of lowercase only,
  strip_accents only, and both, for the characters they change, as three strings: "from" (the
  characters), "lengths" (one decimal digit per character: the length of its result) and "to" (the
  results concatenated). Strings keep the file small and fast to load.
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


def char_map(norm) -> dict[str, str]:
    """Sparse per-character map {"from", "lengths", "to"} for the characters the normalizer changes."""
    src, lengths, dst = [], [], []
    for c in ALL:
        s = norm.normalize_str(chr(c))
        if s != chr(c):
            if len(s) > 9:
                raise SystemExit(f"U+{c:04X} maps to {len(s)} characters: the lengths format holds one digit")
            src.append(chr(c))
            lengths.append(str(len(s)))
            dst.append(s)
    return {"from": "".join(src), "lengths": "".join(lengths), "to": "".join(dst)}


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
    return {
        "clean_remove": ranges(remove),
        "clean_space": ranges(space),
        "cjk": ranges(cjk),
        "split_space": ranges(split_space),
        "punct": ranges(punct),
        "lower": char_map(normalizer(lowercase=True)),
        "strip": char_map(normalizer(strip_accents=True)),
        "strip_lower": char_map(normalizer(strip_accents=True, lowercase=True)),
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
        json.dump(data, f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, OUT)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
