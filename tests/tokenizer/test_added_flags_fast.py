"""Added tokens with flags on the fast engines, against tokenizers' own files.

MPNet's `<mask>` takes the white space before it (lstrip) behind BERT's WordPiece; GPT-NeoX-20B's
and OLMo 1's runs of spaces are `normalized: true` added tokens behind NFC and ByteLevel, beside raw
specials. Both files now run on the fast encoder (plan(spec).engine), which must give tokenizers'
ids and offsets on every route, also on text NFC changes, non-ASCII spaces and tokens side by side.
"""
from __future__ import annotations

import pytest
import tokenizers
from helpers.routes import corpus, disagreements
from tokenizers import AddedToken, decoders, models, normalizers, pre_tokenizers, trainers

import tokkit
from tokkit.tokenizer.plan import plan
from tokkit.tokenizer.encoders import routes

SPACE_RUNS = ["  ", "   ", "    ", "        "]
HOSTILE = ["a <mask> b", "\u3000<mask>", "x<mask>y", "<mask>  ", "  <mask>", "\u00a0<mask>\u00a0", "\t\n<mask>",
           "<mask><mask>", "a  <mask>  <mask>b", "e\u0301 <mask>", "Hello WORLD <mask>.", "", " ", "<mask>",
           "e\u0301  x", "<|endoftext|>  a", "a  <|endoftext|>   b", "    ", "\u3000  \u00a0   e\u0301",
           "\u2000 \u2001  x", "A\u030a\u0301  <|endoftext|>e\u0301", "<|endoftext|><|endoftext|>  ",
           "def f():\n        return 1\n", "\u65e5\u672c  \u8a9e", "x=\u0338  y", "  <|padding|>  "]


def _save(tok: tokenizers.Tokenizer, folder) -> tuple[tokenizers.Tokenizer, tokkit.Tokenizer]:
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    return tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")), tokkit.load(folder / "tokenizer.json")


def mpnet_like(folder, lowercase: bool = True):
    """BERT WordPiece with MPNet's specials, `<mask>` with lstrip."""
    tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(corpus(), trainers.WordPieceTrainer(vocab_size=300,
                                                                special_tokens=["[UNK]", "<s>", "</s>"]))
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False, special=True)])
    return _save(tok, folder)


def neox_like(folder, add_prefix_space: bool = False):
    """NFC and ByteLevel BPE with raw specials and normalized runs of spaces."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(corpus(), trainers.BpeTrainer(vocab_size=400,
                                                          special_tokens=["<|endoftext|>", "<|padding|>"],
                                                          initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.add_tokens([AddedToken(run, normalized=True, special=False) for run in SPACE_RUNS])
    return _save(tok, folder)


def test_an_mpnet_like_file_runs_on_the_fast_wordpiece(tmp_path):
    oracle, tok = mpnet_like(tmp_path)
    assert plan(tok.spec).engine == "wordpiece"
    assert disagreements(oracle, tok, HOSTILE) == []


def test_a_neox_like_file_runs_on_the_fast_byte_level_encoder(tmp_path):
    oracle, tok = neox_like(tmp_path)
    the_plan = plan(tok.spec)
    assert (the_plan.engine, the_plan.nfc) == ("bytelevel", True)
    assert disagreements(oracle, tok, HOSTILE) == []


def test_neox_like_runs_of_spaces_come_out_as_the_added_tokens(tmp_path):
    oracle, tok = neox_like(tmp_path)
    ids = tok.encode("a    b")
    assert ids == oracle.encode("a    b").ids
    assert oracle.token_to_id("    ") in ids


def test_an_lstrip_token_takes_non_ascii_white_space(tmp_path):
    """U+3000 and U+00A0 are white space to lstrip (Rust's char::is_whitespace), on every route."""
    oracle, tok = mpnet_like(tmp_path)
    mask = oracle.token_to_id("<mask>")
    for text in ["\u3000<mask>", "a\u00a0\u3000<mask>"]:
        enc = routes(tok.spec)["planned"]
        ids, starts, _, _ = enc.encode_full(text)
        assert ids[-1] == mask and starts[-1] == text.index("<mask>") - (2 if text[0] == "a" else 1)
        assert ids == oracle.encode(text, add_special_tokens=False).ids


@pytest.mark.parametrize("flag", ["single_word", "lstrip", "rstrip"])
def test_a_flag_reading_neighbours_on_byte_level_reads_code_points(tmp_path, flag):
    """The byte-level ids-only route reads UTF-8; a token whose flags read the chars around it is found
    in the code points instead, so U+3000 counts as white space and U+0301 as a word char (\\w, as
    the general path reads it: marks, connector punctuation, U+200D and U+2160 are, U+00B2 is not)."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator(corpus(), trainers.BpeTrainer(vocab_size=400,
                                                          initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.add_special_tokens([AddedToken("<m>", **{flag: True})])
    oracle, ours = _save(tok, tmp_path)
    assert plan(ours.spec).engine == "bytelevel"
    texts = ["\u3000<m>\u3000", "e\u0301<m>", "<m>e\u0301", "a <m> b", "\u00a0<m>\u00a0x", "_<m>", "\u203f<m>",
             "\u00b2<m>\u2160", "\u200d<m>", "x<m>\u0663"]
    assert disagreements(oracle, ours, texts) == []


def test_a_normalized_token_behind_a_lowercasing_bert_normalizer_keeps_the_general_path(tmp_path):
    tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(corpus(), trainers.WordPieceTrainer(vocab_size=300, special_tokens=["[UNK]"]))
    tok.add_tokens([AddedToken("hello", normalized=True)])
    oracle, ours = _save(tok, tmp_path)
    the_plan = plan(ours.spec)
    assert the_plan.engine == "general" and "normalized: true behind BertNormalizer" in the_plan.reason
    assert disagreements(oracle, ours, ["Hello hello HELLO", "xhello"]) == []


def prefix_space_bpe() -> tokenizers.Tokenizer:
    """A byte-level BPE whose ByteLevel puts a space before the text (add_prefix_space)."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.train_from_iterator(corpus(), trainers.BpeTrainer(vocab_size=400,
                                                          initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


def test_prefix_space_keeps_the_fast_path_for_lstrip_and_normalized_tokens(tmp_path):
    tok = prefix_space_bpe()
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True)])
    tok.add_tokens([AddedToken("wor", normalized=True), AddedToken("ld", normalized=False)])
    oracle, ours = _save(tok, tmp_path)
    assert (plan(ours.spec).engine, plan(ours.spec).prefix_space) == ("bytelevel", True)
    texts = HOSTILE + ["world", "hi<mask>there", "\t<mask>x", "x\t<mask>", "wor ld world", "a\tworld"]
    assert disagreements(oracle, ours, texts) == []


def test_prefix_space_with_rstrip_or_single_word_keeps_the_general_path(tmp_path):
    tok = prefix_space_bpe()
    tok.add_special_tokens([AddedToken("<m>", rstrip=True)])
    oracle, ours = _save(tok, tmp_path)
    assert plan(ours.spec).engine == "general" and "rstrip" in plan(ours.spec).reason
    assert disagreements(oracle, ours, ["<m>  x", "<m>x", "a<m>"]) == []


def test_the_nfc_lane_leaves_a_single_word_token_next_to_a_change_to_the_general_path(tmp_path):
    """NFC turns "=\\u0338" (its mark a word char) into "≠" (none): a single_word token right after it
    matches in the NFC text only, so such a text takes the general path for its ids too."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator(corpus(), trainers.BpeTrainer(vocab_size=400,
                                                          initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.add_special_tokens([AddedToken("[m]", single_word=True)])
    oracle, ours = _save(tok, tmp_path)
    assert (plan(ours.spec).engine, plan(ours.spec).nfc) == ("bytelevel", True)
    texts = ["=\u0338[m]", "[m]=\u0338", "x =\u0338[m] y", "e\u0301[m]", "[m]", "\u2260[m]"]
    assert disagreements(oracle, ours, texts) == []

