"""BERT normalize + split equal tokenizers' BertNormalizer + BertPreTokenizer (pieces and offsets)."""
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tokkit.normalize import BertNormalizerOptions, bert_alignments, bert_normalize, bert_split

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, normalizers, pre_tokenizers  # noqa: E402
from tokenizers.models import WordLevel  # noqa: E402

OPTION_SETS = [
    BertNormalizerOptions(),
    BertNormalizerOptions(lowercase=False),
    BertNormalizerOptions(strip_accents=True, lowercase=False),
    BertNormalizerOptions(strip_accents=False, lowercase=True),
    BertNormalizerOptions(clean_text=False, handle_chinese_chars=False),
]
# Combining characters that are not Mn but have a nonzero combining class: the only ones tokenizers'
# whole-string NFD may reorder among themselves after Mn removal (see tokkit/normalize.py).
REORDERED = {chr(c) for c in [0x1715, 0x1734, 0x1B44, 0x1BAA, 0x1BF2, 0x1BF3, 0x302E, 0x302F, 0xA953, 0xA9C0,
                              0x111C0, 0x11235, 0x1134D, 0x116B6, 0x1193D, 0x16FF0, 0x16FF1, 0x1D165, 0x1D166,
                              0x1D16D, 0x1D16E, 0x1D16F, 0x1D170, 0x1D171, 0x1D172]}

_oracles = {}


def oracle(options: BertNormalizerOptions) -> Tokenizer:
    """A tokenizers pipeline whose WordLevel model maps every piece to [UNK]: one token per piece."""
    if options not in _oracles:
        tok = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(
            clean_text=options.clean_text, handle_chinese_chars=options.handle_chinese_chars,
            strip_accents=options.strip_accents, lowercase=options.lowercase)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        _oracles[options] = tok
    return _oracles[options]


def expected(text: str, options: BertNormalizerOptions):
    tok = oracle(options)
    norm = tok.normalizer.normalize_str(text)
    pieces = [p for p, _ in tok.pre_tokenizer.pre_tokenize_str(norm)]
    offsets = [tuple(o) for o in tok.encode(text, add_special_tokens=False).offsets]
    return norm, list(zip(pieces, offsets))


def check(text: str, options: BertNormalizerOptions) -> None:
    norm, split = expected(text, options)
    assert bert_normalize(text, options) == norm
    assert bert_split(text, options) == split


SPECIAL = ["\x00", "\t", "\n", "\r", "\x0b", "\x85", "\xa0", "\u200b", "\u200d", "\u2028", "\u3000", "\ufeff",
           "\ufffd", "\ue000", "\u0301", "\u0308", "\u0345", "\u0130", "\u03a3", "\u1e9e", "\ufb01", "\u01c5", "A",
           "é", "E\u0301", "日", "本", "\uf900", "\U00020000", "한", "\u1100\u1161", "ا", "\u0915\u094d\u0937",
           "\U0001F468\u200d\U0001F469", "\U0001F44D\U0001F3FD", "!", "¿", "$", "^", "`", "\u2014", "1", "٣", " "]
chars = st.characters(blacklist_categories=("Cs",))
texts = st.lists(st.one_of(st.sampled_from(SPECIAL), chars), max_size=40).map("".join)


@settings(max_examples=1500, deadline=None)
@given(texts, st.sampled_from(OPTION_SETS))
def test_matches_tokenizers_on_random_text(text, options):
    assume(sum(ch in REORDERED for ch in text) < 2)
    check(text, options)


@settings(max_examples=300, deadline=None)
@given(st.lists(chars, min_size=1, max_size=3).map("".join))
def test_matches_tokenizers_on_short_sequences_of_any_code_points(text):
    assume(sum(ch in REORDERED for ch in text) < 2)
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


def test_documented_difference_nfd_reordering():
    """Two non-Mn marks out of canonical order: tokenizers reorders them, tokkit keeps them as written."""
    text = "a\U0001D16D\U0001D165"
    norm, _ = expected(text, OPTION_SETS[0])
    assert norm == "a\U0001D165\U0001D16D"
    assert bert_normalize(text) == text


def test_every_multilingual_corpus_line(corpus_dir):
    files = sorted((corpus_dir / "multilingual").glob("**/*.txt"))
    assert files
    for options in (OPTION_SETS[0], OPTION_SETS[1]):
        tok = oracle(options)
        for path in files:
            lines = path.read_text(encoding="utf-8").split("\n")
            encodings = tok.encode_batch(lines, add_special_tokens=False)
            for line, enc in zip(lines, encodings):
                if sum(ch in REORDERED for ch in line) > 1:
                    continue
                norm = tok.normalizer.normalize_str(line)
                pieces = [p for p, _ in tok.pre_tokenizer.pre_tokenize_str(norm)]
                want = list(zip(pieces, [tuple(o) for o in enc.offsets]))
                assert bert_split(line, options) == want, (path.name, line[:80])
                assert bert_normalize(line, options) == norm, (path.name, line[:80])
