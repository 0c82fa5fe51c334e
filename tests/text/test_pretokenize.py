"""The compiled GPT-2 scanner equals regex.findall(GPT2_PATTERN) everywhere we can look."""
import time

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from tokkit.text.pretokenize import GPT2_PATTERN, gpt2_spans, split_gpt2, split_regex

REF = regex.compile(GPT2_PATTERN)

# Characters that exercise every branch: contractions, the optional space, runs of each class,
# whitespace look-ahead, other scripts, combining marks, emoji with ZWJ / skin tones, controls.
INTERESTING = list("'strevmld ") + ["\n", "\r", "\t", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2028", "\u3000",
                                    "\u200b", "\u200d", "\ufeff"] + list("aZé1٣²½!?.,-_^\"`") + \
    ["\u0301", "\u0915\u094d", "日", "本", "한", "ا", "\U0001F600", "\U0001F44D\U0001F3FD", "\u2160", "\U0001D7D8"]
texts = st.lists(st.one_of(st.sampled_from(INTERESTING), st.characters(codec="utf-8"),
                           st.characters(max_codepoint=0x10FFFF)), max_size=60).map("".join)


@settings(max_examples=2000, deadline=None)
@given(texts)
def test_scanner_equals_regex(text):
    assert split_gpt2(text) == REF.findall(text)


@settings(max_examples=500, deadline=None)
@given(texts)
def test_spans_tile_the_text(text):
    spans = gpt2_spans(text)
    assert [text[a:b] for a, b in spans] == REF.findall(text)
    starts = [a for a, _ in spans]
    assert starts == ([0] + [b for _, b in spans[:-1]] if spans else [])
    assert (spans[-1][1] if spans else 0) == len(text)


@pytest.mark.parametrize("text", ["", " ", "  ", "a", "'", "''", "'s", "'re", "'rex", " 's", "a's", "x  y",
                                  "x \n y", "end   ", "\n\n", "٣٤ 12", "é\u0301", "a\u0301b", "\U0001F600!"])
def test_known_edge_cases(text):
    assert split_gpt2(text) == REF.findall(text)


def test_split_regex_is_the_general_path():
    assert split_regex("a1 b", r"\d|\w") == ["a", "1", "b"]
    assert split_regex("they're") == ["they", "'re"]


def _corpus_lines(root, pattern, limit):
    for path in sorted(root.glob(pattern))[:limit]:
        with open(path, encoding="utf-8", newline="") as f:
            yield path, f.read().split("\n")


def test_every_corpus_line(corpus_dir):
    files = list(_corpus_lines(corpus_dir / "multilingual", "**/*.txt", 10_000))
    files += list(_corpus_lines(corpus_dir / "en" / "wiki", "*.txt", 3))
    files += list(_corpus_lines(corpus_dir / "en" / "pg", "*.txt", 3))
    assert files
    for path, lines in files:
        for n, line in enumerate(lines):
            # with the line ending kept, as the trainers split; and without it
            assert split_gpt2(line + "\n") == REF.findall(line + "\n"), (path, n)
            assert split_gpt2(line) == REF.findall(line), (path, n)


@pytest.mark.parametrize("text", ["a" * 1_000_000, "^" * 1_000_000, " " * 1_000_000, "1" * 1_000_000,
                                  "é" * 10_000_000, ("ab,cd" * 2_000_000), "x " * 500_000])
def test_pathological_inputs_are_linear(text):
    # generous bounds (a shared CI machine); a quadratic scan would take minutes on these
    t = time.perf_counter()
    pieces = gpt2_spans(text)
    assert time.perf_counter() - t < 0.5 + len(pieces) * 2e-6
    assert pieces[0][0] == 0 and pieces[-1][1] == len(text)


def test_every_code_point_is_classified_like_regex():
    """Each code point in a run of its neighbours, and each after a space (the ' ?' branches)."""
    every = "".join(map(chr, range(0x110000)))
    assert split_gpt2(every) == REF.findall(every)
    spaced = " ".join(every)
    assert split_gpt2(spaced) == REF.findall(spaced)


# classes="tokenizers": the same scanner with tokenizers' (older) Unicode classes equals its own regex engine.
def _tokenizers_split():
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import Regex, pre_tokenizers

    split = pre_tokenizers.Split(Regex(GPT2_PATTERN), behavior="isolated")
    return lambda text: [p for p, _ in split.pre_tokenize_str(text)]


@settings(max_examples=800, deadline=None)
@given(texts.filter(lambda t: not any(0xD800 <= ord(c) < 0xE000 for c in t)))
def test_tokenizers_classes_equal_tokenizers_split(text):
    assert split_gpt2(text, classes="tokenizers") == _tokenizers_split()(text)


def test_tokenizers_classes_on_every_code_point():
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    split = _tokenizers_split()
    assert split_gpt2(every, classes="tokenizers") == split(every)
    assert split_gpt2("a\U000323B0b") != split_gpt2("a\U000323B0b", classes="tokenizers")
    with pytest.raises(ValueError):
        split_gpt2("a", classes="unicode")


def test_tokenizers_classes_are_tiktokens_too():
    """tiktoken (r50k pattern) sees the same \\p{L} / \\p{N} as tokenizers. Its pieces are not exposed,
    so probe them: byte-pair ranks starting with "a" / "1" merge across two characters only when
    both lie in one piece."""
    tiktoken = pytest.importorskip("tiktoken")
    pattern = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    ranks = {bytes([lead, x]): k for k, (lead, x) in enumerate((lead, x) for lead in b"a1" for x in range(256))}
    for x in range(256):
        ranks[bytes([x])] = len(ranks)
    enc = tiktoken.Encoding("probe", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    single = {ranks[bytes([x])] for x in range(256)}
    sample = [c for c in range(0, 0x110000, 5) if not 0xD800 <= c < 0xE000] + [0x323B0, 0x11DE0, ord("é"), ord("٣")]
    for c in sample:
        for lead in "a1":
            joined = enc.encode_ordinary(lead + chr(c))[0] not in single
            assert joined == (len(split_gpt2(lead + chr(c), classes="tokenizers")) == 1), hex(c)
