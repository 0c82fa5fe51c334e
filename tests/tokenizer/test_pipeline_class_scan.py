"""DeepSeek V3's three Split patterns run on the general path's compiled class scanners
(pipeline_scan.hpp), not through Python's regex engine, and a DeepSeek-V3-style file runs through
the chunk lane: pieces, ids, offsets and word ids against tokenizers.
"""
from __future__ import annotations

import pytest
import test_pipeline_families as families
import test_pre_tokenizers as pre_cases
import tokenizers
from helpers.hub_files import _bpe_trainer, _trained, texts
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Regex, decoders, models, pre_tokenizers

import tokkit
from tokkit._native.pipeline import PipelineEncoder, punct_symbol_table
from tokkit.tokenizer.pre_tokenizers import CLASS_SCANNERS

DIGITS3 = r"\p{N}{1,3}"
KANA_HAN = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
MAIN = next(p for p in CLASS_SCANNERS if "\r" in p)  # as DeepSeek's file spells it: CR and LF themselves
MAIN_ESCAPED = MAIN.replace("\r", "\\r").replace("\n", "\\n")

# Where the alternatives of DeepSeek's pattern meet: ASCII punctuation before ASCII letters, marks
# alone and after a space, a space before punctuation, symbols then newlines, runs of white space
# with and without newlines, at the end and not, format chars (neither letter, punctuation nor symbol)
HARD = ["'s don't .NET #tag @user", "\u0301", " \u0301a", "a\u0301\u0301b", "x \u0301", ". ,\r\n\r\nx", "$$\n",
        "  \n  \n  a", " \t a", "a  ", "a \u200bb \u200b", "\u200b\u200b", "\u00ab\u00bb\u2014x", "\u20ac5 \u00a35",
        "1234567 \u0663\u0663\u0663\u0663 \u00bd\u00bd\u00bd", "\u6f22\u5b57\u3072\u3089\u304c\u306a\u30ab\u30bf\u30ab\u30ca\u4e00\u9fa5\u9fa6",
        "\ud55c\uad6d\uc5b4 \u0627\u0644\u0639\u0631\u0628\u064a\u0629", "\U0001f600\U0001f600 x\U0001f600",
        "e.g.\"quoted\"", "\r", "\n\n", " ", "", "x\t\n", "\u3000\u3001\u3002", "a\u00a0\u00a0b", "\ue000\ue000x"]


def test_the_three_patterns_take_the_compiled_scanners():
    for pattern in (DIGITS3, KANA_HAN, MAIN, MAIN_ESCAPED):
        families.compiled({"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False})


def test_punct_symbol_table_holds_punctuation_and_symbols_only():
    table = punct_symbol_table()
    assert table[ord("!")] == table[ord("~")] == table[0x2014] == table[0x20AC] == table[0x1F600] == 1
    assert table[ord("a")] == table[ord("5")] == table[ord(" ")] == table[0x0301] == table[0x200B] == 0


SPLITS = [families.family_split(p, b, i) for p in (DIGITS3, KANA_HAN, MAIN, MAIN_ESCAPED)
          for b, i in families.BEHAVIORS]
SPLIT_IDS = [f"{name}-{b}-{i}" for name in ("digits3", "kana_han", "main", "main_escaped")
             for b, i in families.BEHAVIORS]
TEXT = st.one_of(pre_cases.TEXT, families.SPACED, st.lists(st.sampled_from(HARD + families.HARD), max_size=5).map("".join))


@pytest.mark.parametrize("split", SPLITS, ids=SPLIT_IDS)
@settings(max_examples=60, deadline=None)
@given(text=TEXT)
def test_every_behavior_gives_tokenizers_pieces(split, text):
    obj = pre_cases.as_json(split)
    assert families.pieces(obj, text) == pre_cases.expected(obj, text)


@pytest.mark.parametrize("split", SPLITS, ids=SPLIT_IDS)
def test_every_behavior_on_hard_texts(split):
    obj = pre_cases.as_json(split)
    for text in HARD + families.HARD + ["".join(HARD)]:
        assert families.pieces(obj, text) == pre_cases.expected(obj, text), repr(text)


# ------------------------------------------------------------------------------ a DeepSeek-V3-style file
@pytest.fixture(scope="module")
def deepseek(tmp_path_factory):
    """A byte-level BPE behind DeepSeek V3's Sequence: the three Splits, then ByteLevel without its regex."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(p), behavior="isolated") for p in (DIGITS3, KANA_HAN, MAIN)]
        + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    folder = _trained(tmp_path_factory.mktemp("deepseek"), tok, _bpe_trainer(["<｜begin▁of▁sentence｜>"]))
    return tokkit.load(folder), tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))


def test_deepseek_file_runs_the_chunk_lane(deepseek):
    tok, _ = deepseek
    assert isinstance(tok._encoder, PipelineEncoder)
    assert tok._encoder.fast_lane


def test_deepseek_file_equals_tokenizers(deepseek):
    tok, hf = deepseek
    cases = HARD + families.HARD + texts() + ["".join(HARD), " ".join(HARD), "  ".join(texts())]
    for text in cases:
        families.assert_equal(tok, hf, text)
    want = [e.ids for e in hf.encode_batch(cases, add_special_tokens=False)]
    assert tok.encode_batch(cases) == want


@settings(max_examples=150, deadline=None)
@given(text=TEXT)
def test_deepseek_file_equals_tokenizers_on_drawn_text(deepseek, text):
    tok, hf = deepseek
    families.assert_equal(tok, hf, text)
    families.assert_equal(tok, hf, text + " " + text)
