"""BERT normalize + split equal tokenizers' BertNormalizer + BertPreTokenizer (pieces and offsets)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokkit.text.normalize import BertNorm, bert_alignments, bert_normalize, bert_split

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, normalizers, pre_tokenizers  # noqa: E402
from tokenizers.models import WordLevel  # noqa: E402

OPTION_SETS = [
    BertNorm(),
    BertNorm(lowercase=False),
    BertNorm(strip_accents=True, lowercase=False),
    BertNorm(strip_accents=False, lowercase=True),
    BertNorm(clean_text=False, handle_chinese_chars=False),
]
# Combining characters that are not Mn but have a nonzero combining class: they survive strip_accents
# and tokenizers' whole-string NFD reorders them (and shifts alignments) among the other marks.
REORDERED = [chr(c) for c in [0x1715, 0x1B44, 0x302E, 0x302F, 0x16FF0, 0x1D165, 0x1D166, 0x1D16D, 0x1D172]]
MARKS = ["\u0301", "\u0316", "\u0334", "\u0345", "\u05b0", "\u0f71", "\u093c", "\u094d", "\u0300", "\u1dce"]

_oracles = {}


def oracle(options: BertNorm) -> Tokenizer:
    """A tokenizers pipeline whose WordLevel model maps every piece to [UNK]: one token per piece."""
    if options not in _oracles:
        tok = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(
            clean_text=options.clean_text, handle_chinese_chars=options.handle_chinese_chars,
            strip_accents=options.strip_accents, lowercase=options.lowercase)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        _oracles[options] = tok
    return _oracles[options]


def expected(text: str, options: BertNorm):
    tok = oracle(options)
    norm = tok.normalizer.normalize_str(text)
    pieces = [p for p, _ in tok.pre_tokenizer.pre_tokenize_str(norm)]
    offsets = [tuple(o) for o in tok.encode(text, add_special_tokens=False).offsets]
    return norm, list(zip(pieces, offsets))


def check(text: str, options: BertNorm) -> None:
    norm, split = expected(text, options)
    assert bert_normalize(text, options) == norm
    assert bert_split(text, options) == split


SPECIAL = ["\x00", "\t", "\n", "\r", "\x0b", "\x85", "\xa0", "\u200b", "\u200d", "\u2028", "\u3000", "\ufeff",
           "\ufffd", "\ue000", "\u0301", "\u0308", "\u0345", "\u0130", "\u03a3", "\u1e9e", "\ufb01", "\u01c5", "A",
           "é", "E\u0301", "日", "本", "\uf900", "\U00020000", "한", "\u1100\u1161", "ا", "\u0915\u094d\u0937",
           "\U0001F468\u200d\U0001F469", "\U0001F44D\U0001F3FD", "!", "¿", "$", "^", "`", "\u2014", "1", "٣", " ",
           "\u0344", "\u0f73", "\u1e09", "\u01d5"] + REORDERED + MARKS
chars = st.characters(blacklist_categories=("Cs",))
texts = st.lists(st.one_of(st.sampled_from(SPECIAL), chars), max_size=40).map("".join)


@settings(max_examples=1500, deadline=None)
@given(texts, st.sampled_from(OPTION_SETS))
def test_matches_tokenizers_on_random_text(text, options):
    check(text, options)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(REORDERED + MARKS + ["é", "a", "\x00", " ", "\u0344", "日", "İ", "Å"]),
                max_size=12).map("".join), st.sampled_from(OPTION_SETS))
def test_matches_tokenizers_on_runs_of_combining_marks(text, options):
    """Canonical reordering (and tokenizers' alignments under it) in strip_accents."""
    check(text, options)


@settings(max_examples=300, deadline=None)
@given(st.lists(chars, min_size=1, max_size=3).map("".join))
def test_matches_tokenizers_on_short_sequences_of_any_code_points(text):
    for options in OPTION_SETS:
        check(text, options)


def test_every_single_code_point_normalizes_like_the_oracle():
    """The committed table itself: every code point alone, default options and cased."""
    for options in OPTION_SETS:
        norm = oracle(options).normalizer
        chunk = 4096
        for base in range(0, 0x110000, chunk):
            cps = [c for c in range(base, base + chunk) if not 0xD800 <= c < 0xE000]
            text = " ".join(map(chr, cps))  # a space keeps marks from combining with their neighbours
            assert bert_normalize(text, options) == norm.normalize_str(text), hex(base)
        if options == OPTION_SETS[0]:       # punctuation / whitespace classes: each character between letters
            text = "a".join(map(chr, range(0x110000)[:0xD800])) + "a" + "a".join(map(chr, range(0xE000, 0x110000)))
            assert [p for p, _ in bert_split(text)] == [
                p for p, _ in oracle(options).pre_tokenizer.pre_tokenize_str(norm.normalize_str(text))]


def test_offsets_cover_removed_characters_only_inside_a_piece():
    assert bert_split("\x00ab\x00c\x00 d") == [("abc", (1, 5)), ("d", (7, 8))]
    norm, spans = bert_alignments("İx")
    assert norm == "ix" and spans == [(0, 1), (1, 2)]


def test_strip_accents_reorders_marks_like_tokenizers():
    """Two surviving marks out of canonical order are swapped; removed characters do not block it."""
    for text in ("a\U0001D16D\U0001D165", "a\U0001D16D\x00\U0001D165", "\U0001D16D\u0f71\U0001D165"):
        norm, split = expected(text, OPTION_SETS[0])
        assert norm.endswith("\U0001D165\U0001D16D")
        assert (bert_normalize(text), bert_split(text)) == (norm, split)


def test_long_runs_of_marks_are_linear():
    import time

    text = "a" + "\u0301\u0316\U0001D16D\U0001D165" * 250_000
    t = time.perf_counter()
    out = bert_normalize(text)
    assert time.perf_counter() - t < 2.0
    assert out == "a" + "\U0001D165" * 250_000 + "\U0001D16D" * 250_000


def test_every_multilingual_corpus_line(corpus_dir):
    files = sorted((corpus_dir / "multilingual").glob("**/*.txt"))
    assert files
    for options in (OPTION_SETS[0], OPTION_SETS[1]):
        tok = oracle(options)
        for path in files:
            lines = path.read_text(encoding="utf-8").split("\n")
            encodings = tok.encode_batch(lines, add_special_tokens=False)
            for line, enc in zip(lines, encodings):
                norm = tok.normalizer.normalize_str(line)
                pieces = [p for p, _ in tok.pre_tokenizer.pre_tokenize_str(norm)]
                want = list(zip(pieces, [tuple(o) for o in enc.offsets]))
                assert bert_split(line, options) == want, (path.name, line[:80])
                assert bert_normalize(line, options) == norm, (path.name, line[:80])
