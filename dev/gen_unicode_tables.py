"""Probe the pinned oracles for every code point and write tokkit/data/unicode_tables.json.

Run from the repository root with the test extras installed (tokenizers 0.23, regex):

    python dev/gen_unicode_tables.py

Runtime code never imports tokenizers: it reads the JSON this script writes (ranges and sparse maps,
nothing executable). Sections:

- gpt2.L / gpt2.N / gpt2.S: the classes \\p{L}, \\p{N} and \\s as the `regex` package defines them.
- gpt2_tokenizers.L / .N / .S: the same classes as tokenizers' own regex engine (Oniguruma, used by
  its ByteLevel pre-tokenizer) defines them: its Unicode is older, so some recent letters and
  digits are "other" there.
- pattern_tokenizers: the further classes of the cl100k / qwen2 / o200k pre-tokenization patterns
  (tokkit/_native/patterns.py) as that engine defines them, for the compiled scanners of
  pattern_scan.hpp (with gpt2_tokenizers' \\p{L}, \\p{N} and \\s): "upper" is o200k's
  [\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}], "lower" its [\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}], and "fold_s" the
  characters that (?i:s) matches, for the contractions (?i:'s|'t|'re|'ve|'m|'ll|'d). The script
  checks that no character outside ASCII matches (?i:t), r, e, v, m, l or d, so that "fold_s" is all
  the case folding the scanners need. `--section pattern_tokenizers` probes just this section and
  leaves the rest of the file as it is.
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
- norm: tables for the pipeline's other normalizers and pre-tokenizers (tokkit/tokenizer/normalizers.py,
  pre_tokenizers.py, precompiled.py and the compiled pipeline), all probed per code point:
  - norm.source: the oracle versions this section was probed with.
  - norm.nfkd: NFKD's full decomposition of every character it changes, as {"from": the characters,
    "lengths": a list of integers (one per character; some NFKD results are 18 characters long, so
    the one-digit "lengths" string of the bert maps cannot hold them), "to": the results concatenated}.
    NFD is bert.nfd and Lowercase is bert.lower: the script checks that tokenizers' NFD and Lowercase
    normalizers give exactly those maps.
  - norm.compose: the canonical composition pairs as three strings of equal length, "first",
    "second" and "composite" (sorted by first, then second), Hangul syllables included: every
    primary composite with a two-character canonical decomposition that tokenizers' NFC keeps
    (its Unicode is 9.0: newer characters do not decompose there); each pair is checked to compose
    in tokenizers' NFC, and decompose-then-compose is checked to give tokenizers' NFC and NFKC
    of every character.
  - norm.numeric: char::is_numeric (the Digits pre-tokenizer); norm.word: \\w of the Whitespace
    pre-tokenizer's `\\w+|[^\\w\\s]+` (the Rust regex crate's Unicode); norm.mark: what StripAccents
    removes (is_combining_mark of tokenizers' Unicode 9 tables). Rust's char::is_whitespace (Strip,
    WhitespaceSplit, and the \\s of Whitespace) is bert.split_space and tokenizers' punctuation (the
    Punctuation pre-tokenizer) is bert.punct: checked equal, not stored twice.
  - norm.gcb (Grapheme_Cluster_Break value name -> ranges; Other is the rest), norm.ext_pict
    (Extended_Pictographic) and norm.incb (Indic_Conjunct_Break value name -> ranges): the
    properties of UAX #29 extended grapheme clusters that Precompiled walks, read from `regex`'s
    \\p{...} classes and then checked against tokenizers' Precompiled: under a charsmap that rewrites
    every first byte, a cluster shorter than 6 bytes becomes one symbol and a longer one one symbol
    per character, so the symbol counts of probes around each code point show its clusters.
Ranges are inclusive [first, last] pairs. Surrogates (U+D800..U+DFFF) are not probed: tokenizers
cannot receive them; the runtime treats them as "other" characters.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import regex
import tokenizers
from tokenizers import normalizers, pre_tokenizers

from tokkit._native import unicode_tables as ut
from tokkit.tokenizer import normalizers as twin
from tokkit.tokenizer import precompiled

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


def case_folds(letter: str) -> set[int]:
    """Code points that (?i:letter) matches in tokenizers' regex engine."""
    return expand(tokenizers_class(f"(?i:{letter})"))


def probe_patterns() -> dict:
    """The pattern_tokenizers section (see the module docstring)."""
    for letter in "tremvld":
        if case_folds(letter) != {ord(letter), ord(letter.upper())}:
            raise SystemExit(f"(?i:{letter}) matches a character outside ASCII: the scanners need a fold table")
    return {
        "source": f"tokenizers {tokenizers.__version__}",
        "upper": tokenizers_class(r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
        "lower": tokenizers_class(r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
        "fold_s": ranges(case_folds("s")),
    }


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


def decode_map(table: dict) -> dict[int, str]:
    """{"from", "lengths", "to"} -> {cp: result} (either lengths format)."""
    lengths = table["lengths"] if isinstance(table["lengths"], list) else [int(d) for d in table["lengths"]]
    out, at = {}, 0
    for ch, n in zip(table["from"], lengths):
        out[ord(ch)] = table["to"][at:at + n]
        at += n
    return out


def encode_long_map(table: dict[int, str]) -> dict:
    """{cp: result} -> {"from", "lengths" (a list of integers), "to"}: results of any length."""
    keys = sorted(table)
    return {"from": "".join(map(chr, keys)), "lengths": [len(table[c]) for c in keys],
            "to": "".join(table[c] for c in keys)}


def expand(runs) -> set[int]:
    return {c for lo, hi in runs for c in range(lo, hi + 1)}


def probe_classes(white: set[int], punct: set[int]) -> dict:
    """numeric, word and mark, checking on the way that whitespace and punctuation are the BERT ones."""
    split, strip = pre_tokenizers.WhitespaceSplit(), normalizers.Strip()
    punctuation, digits = pre_tokenizers.Punctuation(), pre_tokenizers.Digits(individual_digits=True)
    words, accents = pre_tokenizers.Whitespace(), normalizers.StripAccents()
    numeric, word, mark = [], [], []
    for c in ALL:
        ch = chr(c)
        white_split = len(split.pre_tokenize_str(f"a{ch}a")) == 2
        if white_split != (c in white) or (strip.normalize_str(ch) == "") != (c in white):
            raise SystemExit(f"U+{c:04X}: WhitespaceSplit or Strip disagrees with bert.split_space")
        if (len(punctuation.pre_tokenize_str(f"a{ch}a")) == 3) != (c in punct):
            raise SystemExit(f"U+{c:04X}: the Punctuation pre-tokenizer disagrees with bert.punct")
        if len(digits.pre_tokenize_str(f"a{ch}a")) == 3:
            numeric.append(c)
        pieces = [p for p, _ in words.pre_tokenize_str("a" + ch)]  # \\w joins, \\s drops, other splits
        if pieces == ["a" + ch]:
            word.append(c)
        elif (pieces == ["a"]) != (c in white) or pieces not in (["a"], ["a", ch]):
            raise SystemExit(f"U+{c:04X}: Whitespace splits 'a' + it as {pieces!r}")
        if accents.normalize_str(ch) == "":
            mark.append(c)
    return {"numeric": ranges(numeric), "word": ranges(word), "mark": ranges(mark)}


def probe_compose(nfd: dict[int, str]) -> list[tuple[int, int, int]]:
    """(first, second, composite) for every primary composite tokenizers' NFC produces."""
    import unicodedata

    nfc = normalizers.NFC()
    pairs = []
    for c in ALL:
        parts = unicodedata.decomposition(chr(c)).split()
        if len(parts) != 2 or parts[0].startswith("<") or c not in nfd or nfc.normalize_str(chr(c)) != chr(c):
            continue  # not a two-character canonical decomposition, unknown to tokenizers, or excluded
        pairs.append((int(parts[0], 16), int(parts[1], 16), c))
    for lead in range(19):  # Hangul: L + V -> LV, LV + T -> LVT
        for vowel in range(21):
            lv = 0xAC00 + (lead * 21 + vowel) * 28
            pairs.append((0x1100 + lead, 0x1161 + vowel, lv))
            pairs.extend((lv, 0x11A7 + tail, lv + tail) for tail in range(1, 28))
    for first, second, composite in pairs:
        if nfc.normalize_str(chr(first) + chr(second)) != chr(composite):
            raise SystemExit(f"U+{first:04X} U+{second:04X} does not compose to U+{composite:04X} in tokenizers")
    return sorted(pairs)


def check_forms(nfd: dict, nfkd: dict, ccc: dict, pairs: list) -> None:
    """The twin's decompose + recompose with these tables is tokenizers' NFC and NFKC of every character."""
    compose = {(a, b): c for a, b, c in pairs}
    for table, oracle in ((nfd, normalizers.NFC()), (nfkd, normalizers.NFKC())):
        for c in ALL:
            got = "".join(ch for ch, _ in twin.recompose(twin.decompose(chr(c), table, ccc), compose, ccc))
            if got != oracle.normalize_str(chr(c)):
                raise SystemExit(f"U+{c:04X}: composition tables give {got!r}, tokenizers' {oracle!r} does not")


def without_surrogates(runs: list[list[int]]) -> list[list[int]]:
    return ranges(c for c in expand(runs) if not 0xD800 <= c < 0xE000)


def probe_graphemes() -> dict:
    """Grapheme_Cluster_Break, Extended_Pictographic and Indic_Conjunct_Break from `regex`."""
    return {
        "gcb": {name: without_surrogates(regex_class(rf"\p{{Grapheme_Cluster_Break={name}}}"))
                for name in ut.GRAPHEME_BREAK[1:]},
        "ext_pict": without_surrogates(regex_class(r"\p{Extended_Pictographic}")),
        "incb": {name: without_surrogates(regex_class(rf"\p{{Indic_Conjunct_Break={name}}}"))
                 for name in ("Consonant", "Linker", "Extend")},
    }


# Probes around a code point Y: each shows a boundary next to Y through the size of a cluster.
# M = U+0300 (Extend), © (Extended_Pictographic), U+200D (ZWJ), U+0915 (InCB Consonant), U+094D
# (InCB Linker) and one character of each Hangul class.
_HANGUL = "\u1100\u1161\u11a8\uac00\uac01"
GRAPHEME_PROBES = (["aY", "Ya", "Y\u0300\u0300", "Y\u200d\u00a9\u0300", "\u00a9\u200dY\u0300",
                    "\u00a9Y\u200d\u00a9\u0300", "Y\u094d\u0915\u0300", "\u0915Y\u0915\u0300",
                    "\u0915\u094dY\u0915\u0300"]
                   + [f"{h}Y\u0300" for h in _HANGUL] + [f"Y{h}\u0300" for h in _HANGUL])


def symbols(text: str, table: np.ndarray) -> int:
    """Characters out of Precompiled under a charsmap rewriting every first byte to one symbol."""
    n, start = 0, 0
    for end in precompiled.grapheme_ends(text, table):
        n += 1 if len(text[start:end].encode()) < precompiled.WHOLE_CLUSTER_BYTES else end - start
        start = end
    return n


def check_graphemes(section: dict) -> None:
    """Every probe around every code point gives tokenizers' cluster sizes under the twin's rules."""
    table = ut.grapheme_array(section)
    blob = precompiled.build_charsmap({bytes([b]): "|" if b == 0x0A else "#" for b in range(1, 256)})
    oracle = normalizers.Precompiled(blob)
    ys = [c for c in ALL if c not in (0x0A, 0x0D)]  # LF separates the probes; CR would join it
    for probe in GRAPHEME_PROBES:
        seen = [len(p) for p in oracle.normalize_str("\n".join(probe.replace("Y", chr(c)) for c in ys)).split("|")]
        expected: dict[tuple[int, int], int] = {}
        for c, count in zip(ys, seen):
            key = (int(table[c]), len(chr(c).encode()))
            if key not in expected:
                expected[key] = symbols(probe.replace("Y", chr(c)), table)
            if expected[key] != count:
                raise SystemExit(f"{probe!r} with Y = U+{c:04X}: tokenizers makes {count} symbols, the grapheme "
                                 f"properties {expected[key]}")


def probe_norm(bert: dict) -> dict:
    nfd, lower = decode_map(bert["nfd"]), decode_map(bert["lower"])
    if sparse_map(normalizers.NFD()) != nfd or sparse_map(normalizers.Lowercase()) != lower:
        raise SystemExit("tokenizers' NFD or Lowercase normalizer differs from bert.nfd / bert.lower")
    nfkd = sparse_map(normalizers.NFKD())
    ccc = {c: k for c, k in bert["ccc"]}
    pairs = probe_compose(nfd)
    check_forms(nfd, nfkd, ccc, pairs)
    section = {
        "source": f"tokenizers {tokenizers.__version__}, regex {regex.__version__}",
        "nfkd": encode_long_map(nfkd),
        "compose": {"first": "".join(chr(a) for a, _, _ in pairs), "second": "".join(chr(b) for _, b, _ in pairs),
                    "composite": "".join(chr(c) for _, _, c in pairs)},
        **probe_classes(expand(bert["split_space"]), expand(bert["punct"])),
        **probe_graphemes(),
    }
    check_graphemes(section)
    return section


def write(data: dict) -> None:
    tmp = OUT.with_suffix(".json.tmp")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, OUT)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


SECTIONS = {"pattern_tokenizers": probe_patterns}


def main() -> None:
    if sys.argv[1:2] == ["--section"] and len(sys.argv) == 3 and sys.argv[2] in SECTIONS:
        with open(OUT, encoding="utf-8") as f:
            data = json.load(f)
        data[sys.argv[2]] = SECTIONS[sys.argv[2]]()
        write(data)
        return
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
        "pattern_tokenizers": probe_patterns(),
        "bert": probe_bert(),
    }
    data["norm"] = probe_norm(data["bert"])
    write(data)


if __name__ == "__main__":
    main()
