""".model files against the sentencepiece package where tokkit's ids used to differ:

- user-defined symbols that sentencepiece's character map would change ("\\n" and "\\t" become
  spaces, "ﬁ" becomes "fi", U+2581 a space): sentencepiece finds the symbols in the raw text before it
  applies the map, so they stay whole;
- text made only of characters the map deletes (alone, between spaces, before and after symbols);
- the SentencePiece model tokkit writes for a trained Unigram (`--sentencepiece-model`), on text with
  a typed U+2581 (its own tokenizer and the written model read it as a space alike).
"""
from __future__ import annotations

import pytest
from helpers.hub_files import spm_lines, train_spm

import tokkit

spm = pytest.importorskip("sentencepiece")

SYMBOLS = ["\n", "\t", "\ufb01", "\u2581\u2581", "<sym>", "\u2581x"]
DELETED = ["\u200b", "\u200b\u200b", "\ufeff", "\u00ad", "\u200b \u200b", " \u200b", "\u200b ", "\u00ad\u00ad x",
           "a\u200b", "\u200ba", "a \u200b b"]
IN_TEXT = ["a\nb", "a\tb", "\ufb01sh", "x\u2581\u2581y", "a \n b", "<sym>\n", "a\t\tb c", "\ufb01 and \ufb01x",
           "line one\nline two\n\nend", "\u2581\u2581a", "a\u2581\u2581 b", "x \u2581x y", "<sym>\u200b\t",
           "tab\tthen \ufb01\n", "\u2581x\u2581x"]


@pytest.fixture(scope="module", params=["unigram", "bpe"])
def symbols_model(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("spm") / f"{request.param}.model"
    return request.param, train_spm(path, model_type=request.param, user_defined_symbols=SYMBOLS)


def test_symbols_the_map_would_change_stay_whole(symbols_model):
    kind, path = symbols_model
    tok, sp = tokkit.load(path), spm.SentencePieceProcessor(model_file=str(path))
    # a text that is one symbol alone, once the map is done: BPE's documented case
    alone = SYMBOLS + [" \ufb01 ", "\u200b<sym>", "\u200b\n\u200b"] if kind == "unigram" else []
    for text in IN_TEXT + DELETED + alone:
        want = sp.encode(text)
        assert tok.encode(text) == want, (text, tok.encode_with_offsets(text).tokens, sp.encode(text, out_type=str))
        assert tok.encode_with_offsets(text).ids == want, text
    for symbol in ("\n", "\t", "\ufb01"):  # whole, where the map would have made a space or "fi" of them
        assert sp.piece_to_id(symbol) in tok.encode(f"a{symbol}b")


def test_the_written_pipeline_is_what_tokenizers_reads(symbols_model, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    _, path = symbols_model
    tok = tokkit.load(path)
    oracle = tokenizers.Tokenizer.from_file(str(tok.save(tmp_path) / "tokenizer.json"))
    for text in IN_TEXT + DELETED:
        assert oracle.encode(text, add_special_tokens=False).ids == tok.encode(text), text


def test_text_of_deleted_chars_alone_gives_sentencepiece_ids(tmp_path_factory):
    for options in (dict(), dict(model_type="bpe"), dict(remove_extra_whitespaces=False),
                    dict(model_type="bpe", add_dummy_prefix=False)):
        path = train_spm(tmp_path_factory.mktemp("deleted") / "m.model", **options)
        tok, sp = tokkit.load(path), spm.SentencePieceProcessor(model_file=str(path))
        for text in DELETED:
            assert tok.encode(text) == sp.encode(text), (options, text)


# ------------------------------------------------------------------------------ the written model
TYPED = ["a\u2581b", "\u2581a", "a\u2581", "\u2581\u2581a", "a \u2581 b", "\u2581", "x\u2581\u2581y", "\u2581 \u2581",
         "hello\u2581world again", "  \u2581\u2581  "]


def test_a_trained_unigram_and_its_sentencepiece_model_read_a_typed_metaspace_alike(tmp_path):
    tok = tokkit.train(texts=list(spm_lines())[:800], algo="unigram", vocab_size=400, sentencepiece_model=True,
                       special_tokens=["<unk>"])
    folder = tok.save(tmp_path / "trained")
    sp = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
    for text in TYPED + ["plain text", "two  spaces  here "]:
        assert tok.encode(text) == sp.encode(text), (text, [tok.id_to_token(i) for i in tok.encode(text)],
                                                     sp.encode(text, out_type=str))
    assert tok.encode("a\u2581b") == tok.encode("a b")  # U+2581 reads as the space it stands for
