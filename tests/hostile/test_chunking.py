"""The corpus chunk reader: cuts never change a word, and no line makes it hold more than two chunks."""
import collections
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokkit.text.corpus import find_cut, iter_chunks, safe_cut
from tokkit.text.count import new_counter
from tokkit.train.bpe import CharBPE
from tokkit.train.bytelevel import ByteLevel
from tokkit.train.wordpiece import WordPiece

MODES = {"gpt2": ByteLevel().count_mode(), "bert-uncased": WordPiece().count_mode(),
         "bert-cased": CharBPE().count_mode()}

# Characters chosen to sit on every boundary the pre-tokenizers care about.
NASTY = list("ab Z9 ,.'!?-") + ["\u00a0", "\u3000", "\u2003", "\u0301", "\x00", "\t", "\r", "\x85", "\u200b",
                                "д", "Я", "中", "文", "。", "，", "😀", "€", "٣", "ß", "İ", "ﬁ", "'s", "'ll"]


def counts(mode, data: bytes) -> collections.Counter:
    name, options = MODES[mode]
    c = new_counter(name, options)
    c.count(data, errors="replace")
    blob, offsets, n = c.to_arrays()
    return collections.Counter({blob[offsets[i]:offsets[i + 1]]: int(n[i]) for i in range(len(n))})


texts = st.lists(st.sampled_from(NASTY), min_size=2, max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts, st.data())
def test_a_safe_cut_changes_no_word(text, data):
    raw = text.encode("utf-8")
    lo = data.draw(st.integers(1, len(raw) - 1))
    hi = data.draw(st.integers(lo, len(raw)))
    cut = safe_cut(raw, lo, hi)
    if not cut:
        return
    assert lo <= cut <= hi
    raw[:cut].decode("utf-8")  # whole characters on both sides
    raw[cut:].decode("utf-8")
    for mode in MODES:
        assert counts(mode, raw[:cut]) + counts(mode, raw[cut:]) == counts(mode, raw), (mode, raw, cut)


@settings(max_examples=200, deadline=None)
@given(texts, st.integers(2, 40))
def test_chunks_rebuild_the_stream_within_the_size_and_on_characters(text, size):
    raw = (text + "\n" + text).encode("utf-8")
    chunks = list(iter_chunks(io.BytesIO(raw), chunk_size=size))
    assert b"".join(chunks) == raw
    for chunk in chunks:
        assert 0 < len(chunk) <= max(size, 4) + 3
        chunk.decode("utf-8")


@pytest.mark.parametrize("line", [
    "один два три четыре пять шесть семь восемь девять десять " * 40,  # single-line Cyrillic
    "中文的句子，还有标点。" * 60,  # Chinese without spaces: cut at punctuation
    "word, another word. " * 80,
])
def test_long_lines_are_cut_without_changing_a_word(line):
    raw = line.encode("utf-8")
    chunks = list(iter_chunks(io.BytesIO(raw), chunk_size=128))
    assert len(chunks) > 5
    for mode in MODES:
        total = collections.Counter()
        for chunk in chunks:
            total += counts(mode, chunk)
        assert total == counts(mode, raw), mode


@pytest.mark.parametrize("line", [b" " * 5000, b"\x00" * 5000, "д".encode() * 2500, b"\t \x00" * 2000])
def test_lines_without_a_safe_place_are_still_cut(line):
    chunks = list(iter_chunks(io.BytesIO(line + b"\n"), chunk_size=256))
    assert b"".join(chunks) == line + b"\n"
    assert max(map(len, chunks)) <= 256 + 3
    for chunk in chunks:
        chunk.decode("utf-8")


def test_find_cut_prefers_line_ends_then_safe_places():
    assert find_cut(b"aaaa\nbbbb cc", 2, 12) == 5
    assert find_cut(b"aaaa bbbb cc", 2, 12) == 9
    assert find_cut(b"          x", 2, 10) == 10
