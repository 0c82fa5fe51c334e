"""The compiled cl100k / qwen2 / o200k scanners (pattern_scan.hpp) split as tokenizers and `regex` do.

tokenizers' Split with the pattern (Oniguruma, the engine the Hub's tokenizer.json files run on) is the
reference everywhere. `regex.findall` must agree too, except on the code points whose classes the two
engines' Unicode versions disagree on (about 17,000 letters and 340 digits new in `regex`'s Unicode,
and a few letters whose category changed, e.g. U+0295 is Ll in tokenizers and Lo in `regex`): the
scanners follow tokenizers there, so the `regex` comparisons leave out texts holding such a code
point (DISAGREE, computed from both engines below). Every text is split by the UTF-8 scanner in each
block mode (bytes, SWAR, SSE2) and by the code-point scanner, a few pieces at a time, so batch
boundaries fall everywhere.
"""
import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Regex, pre_tokenizers

from tokkit._native import unicode_tables as ut
from tokkit._native.patterns import NAMED
from tokkit._native.text_api import FAMILY, pattern_ends_utf8, pattern_split_str, pattern_split_utf8

FAMILIES = ["cl100k", "qwen2", "o200k"]
SPLITS = {name: pre_tokenizers.Split(Regex(NAMED[name]), "isolated") for name in FAMILIES}
COMPILED = {name: regex.compile(NAMED[name]) for name in FAMILIES}
CLASSES = ut.pattern_classes()
# (pattern of one character, bit): the classes the scanners read, in the engines' own spelling
CLASS_PATTERNS = [(r"\p{L}", ut.PAT_L), (r"\p{N}", ut.PAT_N), (r"\s", ut.PAT_S),
                  (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", ut.PAT_UPPER), (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", ut.PAT_LOWER),
                  (r"(?i:s)", ut.PAT_FOLD_S), (r"[\r\n]", ut.PAT_NL)]


def regex_classes():
    """The table as the `regex` package defines the classes (surrogates included: "other" in both)."""
    every = "".join(map(chr, range(0x110000)))
    table = np.zeros(0x110000, dtype=np.uint8)
    for pattern, bit in CLASS_PATTERNS:
        for m in regex.finditer(f"(?:{pattern})+", every):
            table[m.start():m.end()] |= bit
    return table


DISAGREE = frozenset(np.flatnonzero(regex_classes() != CLASSES).tolist())


def tokenizers_pieces(text, name):
    return [piece for piece, _ in SPLITS[name].pre_tokenize_str(text)]


def scanned(text, name, limit):
    """The pieces from every scanner and mode; asserts they are the same and returns them."""
    family = FAMILY[name]
    pieces = pattern_split_str(text, family, limit)
    for mode in (0, 1, 2):
        assert pattern_split_utf8(text, family, limit, mode) == pieces, (mode, limit)
    assert pattern_split_utf8(text, family) == pieces
    return pieces


def test_table_is_tokenizers_classes():
    """Every code point's bits are the classes tokenizers' engine has (Split "removed" drops a class's members)."""
    every = "".join("a" if 0xD800 <= c < 0xE000 else chr(c) for c in range(0x110000))
    for pattern, bit in CLASS_PATTERNS:
        inside = np.ones(0x110000, dtype=bool)
        for piece, (a, b) in pre_tokenizers.Split(Regex(pattern), "removed").pre_tokenize_str(every):
            inside[a:b] = False
        inside[0xD800:0xE000] = False
        assert np.array_equal(inside, (CLASSES & bit) != 0), pattern


def test_engines_disagree_only_on_recent_characters():
    """The left-out set is what the docstring says: mostly characters tokenizers' Unicode lacks."""
    assert 0x0295 in DISAGREE and 0x11DE0 in DISAGREE     # Ll vs Lo; a digit new in `regex`'s Unicode
    assert not DISAGREE & set(range(0x80))
    assert len(DISAGREE) < 20_000
    assert sum(1 for c in DISAGREE if CLASSES[c] == 0) > 0.95 * len(DISAGREE)   # "other" in tokenizers


# Characters that exercise every branch: contractions in both cases and U+017F (folds to s), the
# prefix class, each run class, \r \n and "/", letters of each case class (Lu, Ll, Lt, Lm, Lo), marks
# (Mn, Mc, Me), digits (Nd, Nl, No), white space beyond ASCII, emoji with ZWJ, and code points the
# engines class differently.
HARD = (list("'sStTrRvVeEmMlLdD ") + ["\n", "\r", "\t", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2028", "\u3000"]
        + list("aZ19/!?.,-_\"`(") + ["\u017f", "\u212a", "\u0130", "\u00c0", "\u00e9", "\u01c5", "\u02b0", "\u4e2d",
                                     "\u05d0", "\u0301", "\u0903", "\u20dd", "\u0663", "\u00b2", "\u2160", "\uff11",
                                     "\U0001F600", "\u200d", "\ufe0f", "\U0001F44D\U0001F3FD", "\u0295", "\U00011DE0",
                                     "\u0915\u094d", "\uac00", "\u3042", "\u30ab", "\u0e01"])


def texts(chars):
    """Runs of characters (1 to 8 of each), so long runs of spaces, digits and letters come up."""
    run = st.tuples(st.one_of(st.sampled_from(HARD), chars), st.integers(1, 8)).map(lambda t: t[0] * t[1])
    return st.lists(st.one_of(run, st.sampled_from(HARD), chars), max_size=40).map("".join)


@pytest.mark.parametrize("name", FAMILIES)
@settings(max_examples=1500, deadline=None)
@given(text=texts(st.characters(codec="utf-8")), limit=st.integers(1, 5))
def test_scanners_equal_tokenizers(name, text, limit):
    assert scanned(text, name, limit) == tokenizers_pieces(text, name)


@pytest.mark.parametrize("name", FAMILIES)
@settings(max_examples=1500, deadline=None)
@given(text=texts(st.characters(max_codepoint=0x10FFFF)), limit=st.integers(1, 5))
def test_scanners_equal_regex(name, text, limit):
    pieces = scanned(text, name, limit)      # surrogates too: tokkit's UTF-8 holds them in 3-byte form
    if not DISAGREE.intersection(map(ord, text)):
        assert pieces == COMPILED[name].findall(text)


# Pieces of ASCII text (with a little else) in long strings: the UTF-8 scanner classes 64 bytes at a
# time, and these put every rule of that path, and its stops, inside and across blocks.
WORDS = ["the", "The", "THE", "HELLOworld", "HelloWorld", "iPhone", "don't", "DON'T", "'s", "'S", "'ll", "'LL",
         "'re", "'ve", "'x", "''", "x'", "'", "y'all", "1", "12", "1234", "1234567", " ", "  ", "   ", "\t", "\n",
         "\r\n", "\n\n", " \n", "\n ", "  \n  ", "/", "/\n", "\n/", "!\n/", ".", ",", "...", "(", ")", "\"", "-",
         "$", "\u017f", "\u00e9", "\u3000", "\u0301", "\u4e2d"]
long_texts = st.lists(st.sampled_from(WORDS), min_size=20, max_size=200).map("".join)


@pytest.mark.parametrize("name", FAMILIES)
@settings(max_examples=600, deadline=None)
@given(text=long_texts, limit=st.sampled_from([1, 3, 64]))
def test_long_ascii_texts(name, text, limit):
    pieces = scanned(text, name, limit)
    assert pieces == tokenizers_pieces(text, name)
    assert pieces == COMPILED[name].findall(text)


CASES = [
    "", " ", "a", "'", "''", "'s", "'S", "'LL", "'ll", "'Ll", "'re", "'RE", "'rE", "'ve", "'VE", "'m", "'M", "'d", "'D",
    "'t", "'T", "'x", "'rex", "'lx", "'\u017f", "'\u017fx", "x'\u017f", "'\u212a", "don't", "DON'T", "They're",
    "THEY'RE", "we'LL", "I'm", "y'all", "rock'n'roll", "it's'", " 's", "?'s", "a's", "''s", "'s's",
    "1", "12", "123", "1234", "12345", "123456", "1234567", " 1234567 ", "a1234b", "\u0663\u0664\u0665\u0666",
    "\u00b2\u00b3", "x\u2160\u2161\u2162\u2163",
    "HELLOworld", "HELLO", "HELLO world", "Hello", "HelloWorld", "helloWORLD", "hELLO", "iPhone", "McDonald's",
    "ABC'S", "ABCdef'S", "\u01c5ungla", "\u02b0\u02b0A", "A\u02b0", "AB\u02b0CD", "\u4e2d\u6587DEF",
    "\u4e2d\u6587abc", "abc\u4e2d\u6587DEF", "\u0301ABC", " \u0301ABC", "!\u0301ABC", "e\u0301", "E\u0301",
    "A\u0301B", "a\u0301\u0301b", "\u0301", " \u0301", "\u0915\u094d\u0937", "\u0e01\u0e34\u0e19",
    "\u00c9COLE", "\u00e9cole", "na\u00efve",
    "\r\n", "\n\n", "a\r\nb", "a\n\n  b", "x \n y", "x\n ", "x\t\ty", "x  \t y", " \n", "\n ", "  \n  \n  x",
    "\t\n\t", "end   ", "  lead", " " * 40 + "x", " " * 40, "\n" * 20, "\u3000\u3000x", "\u00a0x", "\u2028x",
    "\x85x", "\x1cx", "\x0bx", "a\x0c\x0cb",
    "!!!\n\n", "!!! \n", "?!/\n", "x./\n/\n", "a.b", "a..b", "...hello", " .hello", "(hello)", "\"quoted\"",
    " 'quoted'", "$100", "50%", "a/b", "http://x.y/z?q=1", "#include <stdio.h>\n", "\tif (x) {\r\n\t\treturn;\r\n\t}",
    "\U0001F600", "\U0001F600\U0001F600 hi", "\U0001F44D\U0001F3FD!", "\U0001F468\u200d\U0001F469\u200d\U0001F467",
    "a\u200db", "\ufeffhello", "\u00bfQu\u00e9?", "\u0645\u0631\u062d\u0628\u0627 123", "\u0417\u0434\u0440\u0430\u0432\u0441\u0442\u0432\u0443\u0439\u0442\u0435",
    "\u65e5\u672c\u8a9e\u3068English\u3002", "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8", "\u0295x", "x\U00011DE0y",
]


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("text", CASES)
def test_hand_picked_cases(name, text):
    for limit in (1, 2, 64):
        pieces = scanned(text, name, limit)
        assert pieces == tokenizers_pieces(text, name)
        if not DISAGREE.intersection(map(ord, text)):
            assert pieces == COMPILED[name].findall(text)


def test_families_differ_where_the_patterns_do():
    """Checks that would fail if a family ran another family's rules."""
    assert pattern_split_utf8("1234567", FAMILY["cl100k"]) == ["123", "456", "7"]
    assert pattern_split_utf8("1234567", FAMILY["qwen2"]) == list("1234567")
    assert pattern_split_utf8("don't", FAMILY["cl100k"]) == ["don", "'t"]
    assert pattern_split_utf8("don't", FAMILY["o200k"]) == ["don't"]
    assert pattern_split_utf8("HELLOworld x", FAMILY["o200k"]) == ["HELLOworld", " x"]
    assert pattern_split_utf8("HelloWorld", FAMILY["o200k"]) == ["Hello", "World"]
    assert pattern_split_utf8("!/\n", FAMILY["o200k"]) == ["!/\n"]
    assert pattern_split_utf8("'S", FAMILY["cl100k"]) == ["'S"]
    assert pattern_split_str("x\n  y", FAMILY["cl100k"]) == ["x", "\n", " ", " y"]


def test_bad_arguments():
    with pytest.raises(ValueError):
        pattern_split_utf8("x", 0)
    with pytest.raises(ValueError):
        pattern_split_str("x", FAMILY["o200k"], 0)


def _corpus_texts(corpus_dir):
    paths = sorted((corpus_dir / "en" / "wiki").glob("*.txt"))[:1]
    paths += sorted((corpus_dir / "multilingual").glob("*/*.txt"))
    paths += sorted((corpus_dir / "multilingual" / "tatoeba").glob("tatoeba.*-eng.[!e]*"))[:40]
    for path in paths:
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
            text = f.read(200_000)
        yield path, text.encode("utf-8", "replace").decode("utf-8", "replace")


@pytest.mark.corpus
@pytest.mark.parametrize("name", FAMILIES)
def test_corpus_texts_split_identically(corpus_dir, name):
    seen = 0
    for path, text in _corpus_texts(corpus_dir):
        pieces = pattern_split_utf8(text, FAMILY[name], 1000)
        assert pieces == tokenizers_pieces(text, name), path
        assert pattern_split_str(text, FAMILY[name]) == pieces, path
        data = text.encode()
        assert pattern_ends_utf8(data, FAMILY[name]).tolist() == np.cumsum([len(p.encode()) for p in pieces]).tolist()
        if not DISAGREE.intersection(map(ord, text)):
            assert pieces == COMPILED[name].findall(text), path
        seen += len(text)
    assert seen > 1_000_000
