"""Probe the pinned oracles for every code point and write tokkit/data/unicode_tables.json.

Run from the repository root with the test extras installed (tokenizers 0.23, regex):

    python dev/gen_unicode_tables.py

Runtime code never imports tokenizers: it reads the JSON this script writes (ranges and sparse maps,
nothing executable). Sections:

- gpt2.L / gpt2.N / gpt2.S: the classes \\p{L}, \\p{N} and \\s as the `regex` package defines them.
- gpt2_tokenizers.L / .N / .S: the same classes as tokenizers' own regex engine (Oniguruma, used by
  its ByteLevel pre-tokenizer) defines them: its Unicode is older, so some recent letters and
  digits are "other" there.
- bert.clean_remove: characters BertNormalizer(clean_text=True) deletes; bert.clean_space: those it
  turns into " ".
- bert.cjk: characters handle_chinese_chars pads with spaces.
- bert.split_space / bert.punct: characters BertPreTokenizer drops as whitespace / isolates as punctuation.
- bert.lower / bert.nfd: per-character results of lowercasing and of NFD, for the characters they
  change, as three strings: "from" (the characters), "lengths" (one decimal digit per character:
  the length of its result) and "to" (the results concatenated). Strings keep the file small and
  fast to load.
- bert.mn: the nonspacing marks strip_accents drops after NFD; bert.ccc: [code point, canonical
  combining class] for every non-starter, found by watching the oracle's NFD reorder each character
  against marks of known class. strip_accents is NFD over the whole string (so runs of non-starters
  are put in canonical order, and tokenizers' alignments stay positional) and then drops Mn; these
  tables let the runtime do the same. The script checks that NFD-minus-Mn reproduces the oracle's
  strip_accents, and lowercase of that its strip_accents + lowercase, for every code point.
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


def tokenizers_class(pattern: str) -> list[list[int]]:
    """Runs of a class as tokenizers' regex engine sees it: the complement of Split(..., "removed")."""
    from tokenizers import Regex

    every = "".join("a" if 0xD800 <= c < 0xE000 else chr(c) for c in range(0x110000))
    inside = bytearray(b"\x01") * 0x110000
    for piece, (a, b) in pre_tokenizers.Split(Regex(pattern), behavior="removed").pre_tokenize_str(every):
        if len(piece) != b - a:
            raise SystemExit("Split offsets are not code points")
        inside[a:b] = bytes(b - a)
    return ranges(c for c in ALL if inside[c])


def normalizer(**flags) -> normalizers.BertNormalizer:
    base = dict(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    base.update(flags)
    return normalizers.BertNormalizer(**base)


def probe_ccc(nfd_map: dict[int, str]) -> list[list[int]]:
    """[code point, ccc] for every non-starter whose NFD is itself, probed through the oracle's NFD.

    NFD(r + c) swaps the two iff ccc(r) > ccc(c) > 0. U+0345 (ccc 240, the largest class) finds the
    non-starters; marks of each known class (from Python's unicodedata, stable characters) then
    bracket the class by bisection.
    """
    import unicodedata

    nfd = normalizers.NFD()
    candidates: dict[int, list[str]] = {}
    for c in range(0x110000):
        k = unicodedata.combining(chr(c))
        if k and unicodedata.normalize("NFD", chr(c)) == chr(c):
            candidates.setdefault(k, []).append(chr(c))
    # One reference mark per class that the oracle agrees with (its Unicode version may predate
    # some marks): a non-starter that sorts after the previous class's reference.
    refs: dict[int, str] = {}
    for k in sorted(candidates):
        for r in candidates[k]:
            if r != "\u0345" and nfd.normalize_str("\u0345" + r) != r + "\u0345":
                continue
            prev = refs[max(refs)] if refs else None
            if prev and (nfd.normalize_str(r + prev) != prev + r or nfd.normalize_str(prev + r) != prev + r):
                continue
            refs[k] = r
            break
    classes = sorted(refs)
    out = []
    for c in ALL:
        ch = chr(c)
        if c in nfd_map:
            continue
        if ch == "\u0345":
            out.append([c, 240])
            continue
        if nfd.normalize_str("\u0345" + ch) != ch + "\u0345":
            continue  # a starter (or class 240, which only U+0345 has)
        lo, hi = 0, len(classes) - 1      # find the largest known class k with no swap: ccc(c) >= k
        while lo < hi:
            mid = (lo + hi + 1) // 2
            r = refs[classes[mid]]
            if nfd.normalize_str(r + ch) == r + ch:
                lo = mid
            else:
                hi = mid - 1
        out.append([c, classes[lo]])
    return out


def check_strip(nfd_map: dict[int, str], mn: set[int], lower_map: dict[int, str]) -> None:
    """NFD minus Mn must be the oracle's strip_accents per character, and lowercase of it strip + lowercase."""
    strip, both = normalizer(strip_accents=True), normalizer(strip_accents=True, lowercase=True)
    for c in ALL:
        derived = "".join(x for x in nfd_map.get(c, chr(c)) if ord(x) not in mn)
        if strip.normalize_str(chr(c)) != derived:
            raise SystemExit(f"strip_accents(U+{c:04X}) is not NFD minus Mn")
        if both.normalize_str(chr(c)) != "".join(lower_map.get(ord(x), x) for x in derived):
            raise SystemExit(f"strip_accents + lowercase of U+{c:04X} is not lowercase(strip(c))")


def sparse_map(norm) -> dict[int, str]:
    return {c: s for c in ALL if (s := norm.normalize_str(chr(c))) != chr(c)}


def encode_map(table: dict[int, str]) -> dict[str, str]:
    """{cp: result} -> {"from", "lengths", "to"} strings."""
    for c, s in table.items():
        if len(s) > 9:
            raise SystemExit(f"U+{c:04X} maps to {len(s)} characters: the lengths format holds one digit")
    keys = sorted(table)
    return {"from": "".join(map(chr, keys)), "lengths": "".join(str(len(table[c])) for c in keys),
            "to": "".join(table[c] for c in keys)}


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
    lower, nfd = sparse_map(normalizer(lowercase=True)), sparse_map(normalizers.NFD())
    strip = normalizer(strip_accents=True)
    mn = {c for c in ALL if c not in nfd and strip.normalize_str(chr(c)) == ""}
    check_strip(nfd, mn, lower)
    return {
        "clean_remove": ranges(remove),
        "clean_space": ranges(space),
        "cjk": ranges(cjk),
        "split_space": ranges(split_space),
        "punct": ranges(punct),
        "lower": encode_map(lower),
        "nfd": encode_map(nfd),
        "mn": ranges(mn),
        "ccc": probe_ccc(nfd),
    }


def main() -> None:
    data = {
        "source": f"tokenizers {tokenizers.__version__}, regex {regex.__version__}",
        "gpt2": {
            "L": regex_class(r"\p{L}"),
            "N": regex_class(r"\p{N}"),
            "S": regex_class(r"\s"),
        },
        "gpt2_tokenizers": {
            "L": tokenizers_class(r"\p{L}"),
            "N": tokenizers_class(r"\p{N}"),
            "S": tokenizers_class(r"\s"),
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
