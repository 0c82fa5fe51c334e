""".model files against the sentencepiece package where tokkit's ids used to differ:

- user-defined symbols that sentencepiece's character map would change ("\\n" and "\\t" become
  spaces, "ﬁ" becomes "fi", U+2581 a space): sentencepiece finds the symbols in the raw text before it
  applies the map, so they stay whole;
- text made only of characters the map deletes (alone, between spaces, before and after symbols);
- the SentencePiece model tokkit writes for a trained Unigram (`--sentencepiece-model`), on text with
  a typed U+2581 (its own tokenizer and the written model read it as a space alike);
- loading a BPE model does work in proportion to its pieces' characters (the merges used to come from
  every split of every piece, cut out and looked up one by one: a piece's length squared).
"""
from __future__ import annotations

import random
import time

import pytest
from helpers.hub_files import spm_lines, train_spm

import tokkit
from tokkit.tokenizer import sentencepiece_json
from tokkit.tokenizer.sentencepiece_json import merges_from_pieces
from tokkit.tokenizer.sentencepiece_model import NormalizerSpec, Piece, SentencePieceModel, TrainerSpec
from tokkit.tokenizer.sentencepiece_write import model_to_bytes

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


# ------------------------------------------------------------------------------ proportional loading
def _naive_merges(pieces):
    """The definition: every split of a normal piece into two normal pieces, best piece score first."""
    ids = {p.piece: i for i, p in enumerate(pieces) if p.type == "NORMAL"}
    ranked = sorted((-p.score, i, ids[p.piece[:cut]], p.piece[:cut], p.piece[cut:])
                    for i, p in enumerate(pieces) if p.type == "NORMAL"
                    for cut in range(1, len(p.piece)) if p.piece[:cut] in ids and p.piece[cut:] in ids)
    return [(left, right) for *_, left, right in ranked]


@pytest.mark.parametrize("short", [sentencepiece_json.SHORT_PIECE, 0], ids=["cut-out", "tries"])
def test_merges_are_every_split_into_two_pieces(monkeypatch, short):
    monkeypatch.setattr(sentencepiece_json, "SHORT_PIECE", short)
    rng = random.Random(5)
    words = {"".join(rng.choice("ab\u2581c") for _ in range(rng.randint(1, 8))) for _ in range(3000)}
    pieces = tuple(Piece(w, -rng.random() * 9) for w in sorted(words)) + (Piece("<unk>", 0.0, "UNKNOWN"),
                                                                            Piece("ab", 0.0, "USER_DEFINED"))
    assert merges_from_pieces(pieces) == _naive_merges(pieces)


def _long_piece_model(length: int) -> bytes:
    """A BPE model of the single chars and one piece of `length` chars that splits into no two pieces."""
    pieces = [Piece("<unk>", 0.0, "UNKNOWN"), Piece("a", -1.0), Piece("b", -1.5), Piece("b" + "a" * (length - 1), -9.0)]
    trainer = TrainerSpec(model_type="bpe", vocab_size=len(pieces))
    return model_to_bytes(SentencePieceModel(pieces=tuple(pieces), trainer_spec=trainer,
                                             normalizer_spec=NormalizerSpec(precompiled_charsmap=b"")))


def test_a_long_piece_costs_its_length_not_its_square(tmp_path):
    seconds = {}
    for length in (20_000, 320_000):
        path = tmp_path / f"long{length}.model"
        path.write_bytes(_long_piece_model(length))
        best = float("inf")
        for _ in range(3):
            start = time.process_time()  # this process's CPU time: other work on the machine adds little
            tok = tokkit.load(path)
            best = min(best, time.process_time() - start)
        seconds[length] = best
        assert tok.encode("ab")[-2:] == [1, 2]  # (no U+2581 piece: the dummy prefix is unknown)
    # sixteen times the piece: about 50 times the CPU time on a quiet machine, up to 190 times beside
    # a build (the small one fits in cache, the large one competes for memory); its square would be
    # 256 times before any memory effect, about 400 with them
    assert seconds[320_000] < 200 * seconds[20_000] + 0.5, seconds
