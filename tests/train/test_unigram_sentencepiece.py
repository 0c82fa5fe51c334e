"""`--sentencepiece-model`: the trained vocabulary written as a SentencePiece .model, against the
sentencepiece package (same ids as tokkit on NFKC text of plain spaces), tokkit.load, determinism and
bad combinations."""
import os
import pickle
import re
import subprocess
import sys
import unicodedata

import pytest

import tokkit
from tokkit.errors import TokkitError
from tokkit.text.default_corpus import default_texts
from tokkit.tokenizer.precompiled import parse_charsmap, transform
from tokkit.tokenizer.tokenizer import SENTENCEPIECE_FILE

spm = pytest.importorskip("sentencepiece")
pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2", reason="protobuf is not installed")

# reStructuredText rules (===, ---, ***): runs of one character whose segmentations tie exactly in score.
REPEATS = re.compile(r"(.)\1{3}")
OPTIONS = {"plain": {}, "bytes-digits": {"byte_fallback": True, "split_digits": True}}


@pytest.fixture(scope="module")
def lines():
    """The embedded default corpus's non-empty lines: the first 3,000 train, the last 1,500 are held out."""
    return [line for line in default_texts() if line.strip()]


@pytest.fixture(scope="module")
def held(lines):
    """Held-out lines made NFKC with single plain spaces (the text both normalizers leave alike), without
    the rule lines of repeated characters (see test_repeated_characters_tie_in_score_only)."""
    out = [" ".join(unicodedata.normalize("NFKC", line).split()) for line in lines[-1500:]]
    return [line for line in out if not REPEATS.search(line)]


@pytest.fixture(scope="module", params=sorted(OPTIONS))
def trained(request, lines, tmp_path_factory):
    """(tokenizer, folder) trained with the option and saved."""
    tok = tokkit.train(texts=lines[:3000], algo="unigram", vocab_size=700, workers=1, sentencepiece_model=True,
                       **OPTIONS[request.param])
    folder = tmp_path_factory.mktemp(request.param)
    tok.save(folder)
    return tok, folder


def test_sentencepiece_and_tokkit_load_give_tokkits_ids(trained, held):
    tok, folder = trained
    sp = spm.SentencePieceProcessor(model_file=str(folder / SENTENCEPIECE_FILE))
    from_model = tokkit.load(folder / SENTENCEPIECE_FILE)
    assert sp.vocab_size() == tok.vocab_size == from_model.vocab_size
    extra = ["  leading, double  and trailing spaces  ", "in 2024 the 31415 ants", "unseen 漢字 😀 ☃", "", "x"]
    assert len(held) > 1000
    for line in held + extra:
        ids = tok.encode(line)
        assert sp.encode(line) == ids == from_model.encode(line), line
        if sp.unk_id() not in ids:
            assert sp.decode(ids) == " ".join(line.split())


def test_where_sentencepiece_differs_as_documented(trained):
    """No NFKC and only U+0020 as whitespace, typed special tokens as text; tokkit.load of the .model
    follows sentencepiece except on special tokens. A typed ▁ is a space to both (anywhere: see
    tests/tokenizer/test_sentencepiece_symbols.py)."""
    tok, folder = trained
    sp = spm.SentencePieceProcessor(model_file=str(folder / SENTENCEPIECE_FILE))
    from_model = tokkit.load(folder / SENTENCEPIECE_FILE)
    for text, as_tokkit_sees_it in [("tabs\tand\nnewlines", "tabs and newlines"), ("ﬁve ＡＢＣ", "five ABC"),
                                    ("no\u00a0break", "no break")]:
        assert sp.encode(text) != tok.encode(text) and sp.encode(as_tokkit_sees_it) == tok.encode(text)
        assert from_model.encode(text) == sp.encode(text)
    assert sp.encode("a b\u2581") == sp.encode("a b") == from_model.encode("a b\u2581") == tok.encode("a b\u2581")
    assert tok.encode("</s>") == from_model.encode("</s>") == [1] and len(sp.encode("</s>")) > 1


def test_repeated_characters_tie_in_score_only(trained, lines):
    """On rule lines the two may order the same pieces differently: equal scores summed in float32
    (sentencepiece) and float64 (tokkit) round apart. The pieces are the same."""
    tok, folder = trained
    sp = spm.SentencePieceProcessor(model_file=str(folder / SENTENCEPIECE_FILE))
    rules = [line.strip() for line in lines if REPEATS.search(line)][:200]
    for line in rules:
        assert sorted(sp.encode(line)) == sorted(tok.encode(line)), line


def test_the_model_says_what_tokkit_trained(trained):
    tok, folder = trained
    proto = pb.ModelProto()
    proto.ParseFromString((folder / SENTENCEPIECE_FILE).read_bytes())
    ts, ns = proto.trainer_spec, proto.normalizer_spec
    fallback = tok.token_to_id("<0x41>") is not None
    assert (ts.model_type, ts.vocab_size, ts.byte_fallback, ts.split_digits) == (ts.UNIGRAM, 700, fallback, fallback)
    assert (ts.pad_id, ts.eos_id, ts.unk_id, ts.bos_id) == (0, 1, 2, -1) and not ts.treat_whitespace_as_suffix
    assert (ts.max_sentencepiece_length, round(ts.character_coverage, 6)) == (16, 0.9995)
    assert (ns.name, ns.add_dummy_prefix, ns.remove_extra_whitespaces) == ("identity", True, True)
    assert ns.escape_whitespaces
    charsmap = parse_charsmap(ns.precompiled_charsmap)  # U+2581 typed in the text is a space, as in tokkit
    assert transform(charsmap, "\u2581") == " " and transform(charsmap, "a") is transform(charsmap, "\t") is None
    types = [pb.ModelProto.SentencePiece.Type.Name(p.type) for p in proto.pieces]
    assert types[:3] == ["CONTROL", "CONTROL", "UNKNOWN"]
    assert types[3:259] == (["BYTE"] * 256 if fallback else ["NORMAL"] * 256)
    assert set(types[259:]) == {"NORMAL"}
    vocab = tok.get_vocab()
    assert all(vocab[p.piece] == i for i, p in enumerate(proto.pieces))


def test_other_specials_are_control_symbols(lines, tmp_path):
    tok = tokkit.train(texts=lines[:800], algo="unigram", vocab_size=300, special_tokens=["<s>", "[CLS]", "[SEP]"],
                       sentencepiece_model=True)
    tok.save(tmp_path)
    proto = pb.ModelProto()
    proto.ParseFromString((tmp_path / SENTENCEPIECE_FILE).read_bytes())
    assert proto.trainer_spec.bos_id == 3 and list(proto.trainer_spec.control_symbols) == ["[CLS]", "[SEP]"]
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / SENTENCEPIECE_FILE))
    assert sp.bos_id() == 3 and sp.piece_to_id("[SEP]") == tok.token_to_id("[SEP]") and sp.is_control(5)


def test_without_the_option_no_model_and_pickling_keeps_it(lines, tmp_path):
    plain = tokkit.train(texts=lines[:500], algo="unigram", vocab_size=200)
    plain.save(tmp_path / "plain")
    assert not (tmp_path / "plain" / SENTENCEPIECE_FILE).exists()
    tok = tokkit.train(texts=lines[:500], algo="unigram", vocab_size=200, sentencepiece_model=True)
    assert tok == plain  # the same tokenizer; only saving differs
    pickle.loads(pickle.dumps(tok)).save(tmp_path / "copy")
    tok.save(tmp_path / "orig")
    assert (tmp_path / "copy" / SENTENCEPIECE_FILE).read_bytes() == (tmp_path / "orig" / SENTENCEPIECE_FILE).read_bytes()


def test_bad_values_are_one_error():
    with pytest.raises(TokkitError, match="sentencepiece_model must be True or False"):
        tokkit.train(texts=["some words"] * 5, algo="unigram", vocab_size=50, sentencepiece_model="yes")
    with pytest.raises(TokkitError, match="unsupported option"):
        tokkit.train(texts=["some words"] * 5, algo="bpe", vocab_size=50, sentencepiece_model=True)


# ------------------------------------------------------------------------------ the command line
def run(args, cwd):
    return subprocess.run([sys.executable, "-m", "tokkit.cli", *args], cwd=cwd, capture_output=True, timeout=300,
                          check=False)


def test_cli_writes_the_same_bytes_each_run_and_for_any_workers(lines, tmp_path):
    (tmp_path / "c.txt").write_text("\n".join(lines[:1500]) + "\n", encoding="utf-8")
    models = []
    for out, workers in [("a", "1"), ("b", "1"), ("c", "2")]:
        proc = run(["train", "--algo", "unigram", "--vocab-size", "400", "--byte-fallback", "--sentencepiece-model",
                    "--workers", workers, "-q", "-o", out, "c.txt"], tmp_path)
        assert proc.returncode == 0, proc.stderr.decode()
        models.append((tmp_path / out / SENTENCEPIECE_FILE).read_bytes())
    assert models[0] == models[1] == models[2]
    assert not [name for name in os.listdir(tmp_path / "a") if name.startswith(".")]  # no temporary left
    # A folder holding the option's earlier output is replaced as tokkit's own.
    again = run(["train", "--algo", "unigram", "--vocab-size", "400", "--sentencepiece-model", "-q", "-o", "a",
                 "c.txt"], tmp_path)
    assert again.returncode == 0, again.stderr.decode()


def test_cli_option_with_another_algorithm_is_one_line_exit_2(tmp_path):
    (tmp_path / "c.txt").write_text("the cat sat on the mat\n" * 20, encoding="utf-8")
    proc = run(["train", "--algo", "wordpiece", "--sentencepiece-model", "c.txt"], tmp_path)
    err = proc.stderr.decode().strip().splitlines()
    assert proc.returncode == 2 and err == ["tokkit: error: --sentencepiece-model applies to --algo unigram only"]
    assert not (tmp_path / "tokkit-wordpiece").exists()
