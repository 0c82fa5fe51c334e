"""WordCounter, char_counts and symbolize against plain-Python references built on the oracles."""
import threading
from collections import Counter

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from tokkit._native import unicode_tables as ut
from tokkit._native.counting import WordCounter
from tokkit._native.patterns import NAMED
from tokkit._native.symbols import char_counts, symbolize, symbolize_bytes
from tokkit.text.count import RegexCounter
from tokkit.text.pretokenize import GPT2_PATTERN

REF = regex.compile(GPT2_PATTERN)
ALPHABET = st.sampled_from(list("ab'sl ,.!1\n\r\t") + ["é", "É", "日", "\u0301", "\U0001F600", "\x00", "\u3000", "İ"])
texts = st.lists(st.one_of(ALPHABET, st.characters(blacklist_categories=("Cs",))), max_size=80).map("".join)


def lines(text: str) -> list[str]:
    """Split after each \\n only, keeping it (as tokenizers reads training files)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def gpt2_reference(text: str) -> Counter:
    return Counter(w.encode() for line in lines(text) for w in REF.findall(line))


def bert_reference(text: str, **options) -> Counter:
    from tokenizers import normalizers, pre_tokenizers

    norm = normalizers.BertNormalizer(**options).normalize_str(text)
    return Counter(p.encode() for p, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(norm))


def as_counter(counter: WordCounter) -> Counter:
    blob, offsets, counts = counter.to_arrays()
    assert offsets.dtype == np.int64 and counts.dtype == np.int64 and offsets[-1] == len(blob)
    words = [blob[offsets[i]:offsets[i + 1]] for i in range(len(counts))]
    assert words == sorted(words) and len(set(words)) == len(words)
    assert int(counts.sum()) == counter.total and len(words) == len(counter)
    return Counter(dict(zip(words, counts.tolist())))


def counted(mode: str, data: bytes, **options) -> Counter:
    c = WordCounter(mode, **options)
    c.count(data)
    return as_counter(c)


@settings(max_examples=500, deadline=None)
@given(texts)
def test_gpt2_counts_equal_regex_line_by_line(text):
    assert counted("gpt2", text.encode(), gpt2_classes="regex") == gpt2_reference(text)


# long ASCII-heavy lines: the scanner classes 64 bytes at a time, and these cross its block edges
BLOCK_PARTS = st.sampled_from(["'s", "'re", "'ll", "'", " ", "  ", "   ", "\t", "\r", "\x0b", "a", "word", "12", ".",
                               ",!", "\u3000", "é", "😀", "\n"])
block_texts = st.lists(BLOCK_PARTS, max_size=120).map("".join)


@settings(max_examples=300, deadline=None)
@given(block_texts)
def test_gpt2_counts_across_scanner_blocks(text):
    assert counted("gpt2", text.encode(), gpt2_classes="regex") == gpt2_reference(text)


@settings(max_examples=200, deadline=None)
@given(texts)
def test_gpt2_counts_with_tokenizers_classes(text):
    from tokenizers import Regex, pre_tokenizers

    split = pre_tokenizers.Split(Regex(GPT2_PATTERN), behavior="isolated")
    want = Counter(p.encode() for line in lines(text) for p, _ in split.pre_tokenize_str(line))
    assert counted("gpt2", text.encode()) == want   # the default flavour


# ---- the compiled pattern families (cl100k = llama3, qwen2, o200k) against the regex path and tokenizers
FAMILIES = ["cl100k", "llama3", "qwen2", "o200k"]
PATTERN_CLASSES = ut.pattern_classes()
# the scanners' classes in the `regex` package's spelling, to find characters the two engines class alike
CLASS_PATTERNS = [(regex.compile(p), bit) for p, bit in [
    (r"\p{L}", ut.PAT_L), (r"\p{N}", ut.PAT_N), (r"\s", ut.PAT_S), (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", ut.PAT_UPPER),
    (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", ut.PAT_LOWER), (r"(?i:s)", ut.PAT_FOLD_S), (r"[\r\n]", ut.PAT_NL)]]
FAMILY_CHARS = st.sampled_from(list("'sStTrReEdDlLmMvV/ \t\n\r\x0b!?.,-(1234") + [
    "\u017f", "\u00e9", "\u00c9", "\u01c5", "\u02b0", "\u0301", "\u0903", "\u4e2d", "\u0663", "\u00b2", "\u2160",
    "\u3000", "\u00a0", "\x85", "\u2028", "\U0001F600", "\u200d", "\u0295", "\U00011DE0", "hello", "HELLO", "World",
    "don't", "DON'T", "12345", "\r\n", "!\n/", "  \n  "])
family_texts = st.lists(st.one_of(FAMILY_CHARS, st.characters(codec="utf-8")), max_size=80).map("".join)


def classed_alike(text: str) -> bool:
    """Whether the `regex` package classes every character of `text` as tokenizers' engine does."""
    for ch in set(text):
        bits = sum(bit for pattern, bit in CLASS_PATTERNS if pattern.fullmatch(ch))
        if bits != PATTERN_CLASSES[ord(ch)]:
            return False
    return True


def regex_counted(name: str, data: bytes) -> Counter:
    """The regex path's counts (RegexCounter: `regex.findall` line by line)."""
    c = RegexCounter(pattern=NAMED[name])
    c.count(data)
    blob, offsets, counts = c.to_arrays()
    assert int(counts.sum()) == c.total
    return Counter({blob[offsets[i]:offsets[i + 1]]: int(counts[i]) for i in range(len(counts))})


def split_counted(name: str, text: str) -> Counter:
    """tokenizers' Split with the pattern, line by line (as its trainers read files)."""
    from tokenizers import Regex, pre_tokenizers

    split = pre_tokenizers.Split(Regex(NAMED[name]), behavior="isolated")
    return Counter(p.encode() for line in lines(text) for p, _ in split.pre_tokenize_str(line))


@pytest.mark.parametrize("name", FAMILIES)
@settings(max_examples=400, deadline=None)
@given(text=family_texts)
def test_family_counts_equal_tokenizers_and_regex_line_by_line(name, text):
    got = counted(name, text.encode())
    assert got == split_counted(name, text)
    if classed_alike(text):  # else the engines' Unicode versions differ; the scanners follow tokenizers
        assert got == regex_counted(name, text.encode())


# long ASCII-heavy texts: the scanners class 64 bytes at a time, and these put lines across the blocks
FAMILY_BLOCK_PARTS = st.sampled_from(["'s", "'S", "'ll", "'", " ", "  ", "   ", "\t", "\r", "\n", "\r\n", "\n\n", "a",
                                      "word", "Word", "WORD", "12", "1234567", ".", ",!", "/", "!/", "\u3000", "\u00e9",
                                      "\U0001F600"])
family_block_texts = st.lists(FAMILY_BLOCK_PARTS, max_size=150).map("".join)


@pytest.mark.parametrize("name", ["cl100k", "qwen2", "o200k"])
@settings(max_examples=200, deadline=None)
@given(text=family_block_texts)
def test_family_counts_across_scanner_blocks(name, text):
    got = counted(name, text.encode())
    assert got == regex_counted(name, text.encode()) == split_counted(name, text)


FAMILY_CASES = [
    "", "\n", "\n\n\n", "no newline at the end", "x\n", "a\r\nb\r\n", "\r\r\n\n", "a \n b", "end   \n  next",
    "  \n  \n  x", "!!!\n/\n", "x./\n/x", "?!/\r\n", "don't\nDON'T\nthey'LL", "'s\n's", "\u017f'\u017f\n",
    "1234567\n12\n3", "HELLOworld\nHelloWorld\niPhone", "\u0301ABC\n\u0301", "\u4e2d\u6587DEF\nabc",
    " " * 70 + "x\n" + " " * 70, "word " * 40 + "\n" + "WORD." * 30, "\t\x0b\x0c\n\x85\u2028\u3000x",
    "\U0001F44D\U0001F3FD!\n\U0001F600 hi", "#include <stdio.h>\n\tif (x) {\r\n\t\treturn;\r\n\t}\n",
]


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("text", FAMILY_CASES)
def test_family_hand_picked_texts(name, text):
    got = counted(name, text.encode())
    assert got == regex_counted(name, text.encode()) == split_counted(name, text)
    c = WordCounter(name)
    c.count(text.encode())
    assert c.total == sum(got.values())


def test_families_are_their_own_patterns():
    """Counts that would differ if a mode ran another family's scanner (or the GPT-2 one)."""
    data = b"HELLOworld don't 1234567\n"
    words = {"cl100k": ["HELLOworld", " don", "'t", " ", "123", "456", "7", "\n"],
             "qwen2": ["HELLOworld", " don", "'t", " ", *"1234567", "\n"],
             "o200k": ["HELLOworld", " don't", " ", "123", "456", "7", "\n"],
             "gpt2": ["HELLOworld", " don", "'t", " 1234567", "\n"]}
    for name, want in {**words, "llama3": words["cl100k"]}.items():
        assert counted(name, data) == Counter(w.encode() for w in want), name


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40) | st.lists(st.sampled_from([b"a", b"A", b"\xc3", b"\xa9", b"\xed\xa0\x80", b"\n", b" ",
                                                           b"'", b"s", b"1", b"\xff"])).map(b"".join))
def test_family_invalid_utf8(data):
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        with pytest.raises(ValueError, match=f"invalid UTF-8 at byte {exc.start}$"):
            WordCounter("o200k").count(data)
    c = WordCounter("o200k")
    c.count(data, errors="replace")
    assert as_counter(c) == split_counted("o200k", data.decode("utf-8", "replace"))


BERT_OPTIONS = [dict(), dict(lowercase=False), dict(lowercase=False, strip_accents=True),
                dict(clean_text=False, handle_chinese_chars=False)]


@settings(max_examples=300, deadline=None)
@given(texts, st.sampled_from(BERT_OPTIONS))
def test_bert_counts_equal_tokenizers(text, options):
    full = dict(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True) | options
    assert counted("bert", text.encode(), **options) == bert_reference(text, **full)


WHITESPACE = [chr(c) for c in range(0x110000) if regex.match(r"\s", chr(c))]
spaced_texts = st.lists(st.one_of(ALPHABET, st.sampled_from(WHITESPACE + ["\x1c", "\u200b", "\u180e"]),
                                  st.characters(blacklist_categories=("Cs",))), max_size=80).map("".join)


@given(spaced_texts)
def test_whitespace_counts_equal_regex(text):
    counter = WordCounter("whitespace")
    counter.count(text.encode())
    expected = Counter(w.encode() for w in regex.findall(r"\S+", text))
    assert as_counter(counter) == expected
    assert counter.total == sum(expected.values())


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=40) | st.lists(st.sampled_from([b"a", b"\xc3", b"\xa9", b"\xed\xa0\x80", b"\xf4\x90",
                                                           b"\xe2\x82", b"\xac", b"\n", b" ", b"\xff"])).map(b"".join))
def test_invalid_utf8(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        with pytest.raises(ValueError, match=f"invalid UTF-8 at byte {exc.start}$"):
            WordCounter("gpt2").count(data)
        text = data.decode("utf-8", "replace")
    else:
        assert counted("gpt2", data, gpt2_classes="regex") == gpt2_reference(text)
    c = WordCounter("gpt2", gpt2_classes="regex")
    c.count(data, errors="replace")
    assert as_counter(c) == gpt2_reference(text)


def test_update_adds_and_threads_count_in_parallel():
    text = "The cat sat.\nThe dog, the CAT!\r\n日本 ok\n" * 2000
    for mode, ref in (("gpt2", None), ("bert", bert_reference(text, lowercase=True))):
        a, b = WordCounter(mode), WordCounter(mode)   # (no recent letters here: both flavours agree)
        parts = [p.encode() for p in lines(text)]
        threads = [threading.Thread(target=lambda c, ps: [c.count(p) for p in ps], args=(c, parts[k::2]))
                   for k, c in enumerate((a, b))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        a.update(b)
        assert as_counter(a) == (ref or gpt2_reference(text))
    a.update(a)
    assert as_counter(a) == Counter({k: 2 * v for k, v in bert_reference(text, lowercase=True).items()})


def test_bad_arguments():
    with pytest.raises(ValueError, match="mode"):
        WordCounter("words")
    with pytest.raises(ValueError, match="gpt2_classes"):
        WordCounter("gpt2", gpt2_classes="unicode")
    with pytest.raises(ValueError, match="tokenizers' classes only"):
        WordCounter("o200k", gpt2_classes="regex")
    with pytest.raises(ValueError, match="'o200k'"):
        WordCounter("o200K")
    with pytest.raises(ValueError, match="errors"):
        WordCounter("gpt2").count(b"a", errors="ignore")


def test_char_counts_and_symbolize():
    c = WordCounter("bert")
    c.count("abc ab a é日 xy".encode())
    blob, offsets, counts = c.to_arrays()
    words = [blob[offsets[i]:offsets[i + 1]].decode() for i in range(len(counts))]
    expect = Counter()
    for w, n in zip(words, counts.tolist()):
        for ch in w:
            expect[ord(ch)] += n
    assert char_counts(blob, offsets, counts) == dict(expect)

    plain = {ord(ch): k for k, ch in enumerate("abcexy")}
    hashed = {ord(ch): 10 + k for k, ch in enumerate("abcexy")}
    syms, soffs, kept = symbolize(blob, offsets, first=plain, middle=hashed, last=hashed, single=plain)
    want_syms, want_offs, want_kept = [], [0], []
    for i, w in enumerate(words):
        ids = [plain.get(ord(w[0])) if k == 0 else hashed.get(ord(ch)) for k, ch in enumerate(w)]
        if None not in ids:
            want_syms += ids
            want_offs.append(len(want_syms))
            want_kept.append(i)
    assert syms.dtype == np.int32 and soffs.dtype == np.int64 and kept.dtype == np.int64
    assert (syms.tolist(), soffs.tolist(), kept.tolist()) == (want_syms, want_offs, want_kept)
    assert "日" in words and words.index("日") not in kept.tolist()

    arrays = {}
    for name, table in dict(first=plain, middle=hashed, last=hashed, single=plain).items():
        arr = np.full(0x110000, -1, dtype=np.int32)
        arr[list(table)] = list(table.values())
        arrays[name] = arr
    again = symbolize(blob, offsets, **arrays)
    assert all(np.array_equal(x, y) for x, y in zip(again, (syms, soffs, kept)))


def test_symbolize_bytes():
    blob, offsets = "aé".encode(), np.array([0, 1, 3])
    ids = np.arange(256, dtype=np.int32)[::-1].copy()
    syms, offs = symbolize_bytes(blob, offsets, ids)
    assert syms.tolist() == [255 - b for b in blob] and offs.tolist() == [0, 1, 3]
    with pytest.raises(ValueError):
        symbolize_bytes(blob, offsets, ids[:10])


def test_corpus_slice_matches_references(corpus_dir):
    paths = sorted((corpus_dir / "en" / "wiki").glob("*.txt"))[:1] + sorted((corpus_dir / "multilingual").glob("*/*"))[:3]
    for path in paths:
        data = path.read_bytes()[:1_000_000]
        data = data[: data.rfind(b"\n") + 1]
        text = data.decode("utf-8")
        assert counted("gpt2", data, gpt2_classes="regex") == gpt2_reference(text), path
        assert counted("bert", data) == bert_reference(text), path


def test_table_is_compact():
    """~40 bytes per distinct word plus its key (a std::unordered_map<std::string, ...> is ~100)."""
    c = WordCounter("gpt2")
    words = ["".join("abcdefghijklmnopqrstuvwxyz"[i // 26 ** k % 26] for k in range(4)) for i in range(200_000)]
    c.count((" " + " ".join(words)).encode())
    assert len(c) == 200_000 and c.total == 200_000
    key_bytes = sum(len(w) + 1 for w in words)
    assert c.nbytes < key_bytes * 2 + 64 * len(c)
