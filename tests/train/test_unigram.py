"""Unigram training: the compiled lattice loops against their Python twin, the trained files against
tokenizers (identical ids) and sentencepiece (tokens per word), determinism, options and bad input."""
import io
import math
import os
import random
import subprocess
import sys

import numpy as np
import pytest

import tokkit
from tokkit.errors import TokkitError
from tokkit.text.default_corpus import default_texts
from tokkit.tokenizer.hf_json import to_json
from tokkit.train import unigram as U
from tokkit.train import unigram_em as E
from tokkit.train import unigram_py

compiled = pytest.importorskip("tokkit._native.unigram_train", reason="the compiled unigram kernel is not built")


@pytest.fixture(scope="module")
def lines():
    """The embedded default corpus's non-empty lines: the first ones train, the last 1,000 are held out."""
    return [line for line in default_texts() if line.strip()]


def vocab_of(tok):
    return to_json(tok._spec)["model"]["vocab"]


# ------------------------------------------------------------------------------ the lattice loops
def random_case(rng: random.Random, n_pieces=40, n_words=60):
    alphabet = "abcde"
    pieces = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4))) for _ in range(n_pieces)})
    pieces = [p for p in pieces if len(p) > 1 or p != "e"]  # "e" is never a piece: unknown nodes occur
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9))) for _ in range(n_words)]
    p_cps, p_off = E.as_arrays(pieces)
    w_cps, w_off = E.as_arrays(words)
    scores = np.array([-rng.uniform(1, 8) for _ in pieces])
    counts = np.array([rng.randint(1, 50) for _ in words], dtype=np.int64)
    return p_cps, p_off, scores, w_cps, w_off, counts


@pytest.mark.parametrize("seed", range(5))
def test_kernel_matches_twin_on_random_lattices(seed):
    p_cps, p_off, scores, w_cps, w_off, counts = random_case(random.Random(seed))
    unk = float(scores.min()) - 10
    for mod_a, mod_b in [(compiled, unigram_py)]:
        ea, oa = mod_a.e_step(p_cps, p_off, scores, w_cps, w_off, counts, unk_score=unk)
        eb, ob = mod_b.e_step(p_cps, p_off, scores, w_cps, w_off, counts, unk_score=unk)
        np.testing.assert_allclose(ea, eb, rtol=1e-12, atol=1e-12)
        assert math.isclose(oa, ob, rel_tol=1e-12)
        np.testing.assert_array_equal(mod_a.viterbi_counts(p_cps, p_off, scores, w_cps, w_off, counts, unk_score=unk),
                                      mod_b.viterbi_counts(p_cps, p_off, scores, w_cps, w_off, counts, unk_score=unk))
        for xa, xb in zip(mod_a.alternatives(p_cps, p_off, scores, unk_score=unk),
                          mod_b.alternatives(p_cps, p_off, scores, unk_score=unk)):
            np.testing.assert_array_equal(xa, xb)


def test_e_step_in_probabilities_equals_log_space(monkeypatch):
    """Short words run in probabilities, long ones in log space: both give the log-space numbers."""
    p_cps, p_off, scores, w_cps, w_off, counts = random_case(random.Random(11), n_words=200)
    mixed = compiled.e_step(p_cps, p_off, scores, w_cps, w_off, counts, unk_score=-100.0)  # > 6 chars: log space
    twin = unigram_py.e_step(p_cps, p_off, scores, w_cps, w_off, counts, unk_score=-100.0)
    assert mixed[0].tobytes() == twin[0].tobytes() and mixed[1] == twin[1]
    linear = compiled.e_step(p_cps, p_off, scores, w_cps, w_off, counts, unk_score=-30.0)  # every word
    monkeypatch.setattr(unigram_py, "LINEAR_FLOOR", math.inf)  # every word in log space
    logs = unigram_py.e_step(p_cps, p_off, scores, w_cps, w_off, counts, unk_score=-30.0)
    np.testing.assert_allclose(linear[0], logs[0], rtol=1e-12, atol=1e-12)
    assert math.isclose(linear[1], logs[1], rel_tol=1e-12)


def test_e_step_and_viterbi_counts_are_the_same_on_any_threads():
    p_cps, p_off, scores, w_cps, w_off, counts = random_case(random.Random(7), n_words=500)
    runs = [compiled.e_step(p_cps, p_off, scores, w_cps, w_off, counts, unk_score=-30.0, threads=t) for t in (1, 2, 5)]
    runs.append(unigram_py.e_step(p_cps, p_off, scores, w_cps, w_off, counts, unk_score=-30.0))
    for expected, objective in runs[1:]:
        assert expected.tobytes() == runs[0][0].tobytes() and objective == runs[0][1]
    freqs = [compiled.viterbi_counts(p_cps, p_off, scores, w_cps, w_off, counts, unk_score=-30.0, threads=t)
             for t in (1, 3)]
    assert freqs[0].tobytes() == freqs[1].tobytes()


@pytest.mark.parametrize("seed", range(3))
def test_substring_counts_match_twin(seed):
    rng = random.Random(seed)
    words = ["▁" + "".join(rng.choice("abcd12,é") for _ in range(rng.randint(0, 12))) for _ in range(80)]
    w_cps, w_off = E.as_arrays(words)
    counts = np.array([rng.randint(1, 9) for _ in words], dtype=np.int64)
    classes = np.array([rng.choice([-1, -2, -3, 0, 1, 2, 2]) for _ in range(len(w_cps))], dtype=np.int32)
    for max_length, min_count in [(16, 1), (3, 2), (1, 1)]:
        got = [compiled.count_substrings(w_cps, w_off, counts, classes, max_length=max_length, min_count=min_count),
               unigram_py.count_substrings(w_cps, w_off, counts, classes, max_length=max_length, min_count=min_count)]
        as_dict = [{tuple(cps[off[k]:off[k + 1]].tolist()): int(c[k]) for k in range(len(c))} for cps, off, c in got]
        assert as_dict[0] == as_dict[1] and (max_length > 1) == bool(as_dict[0])


@pytest.mark.parametrize("engine", [compiled, unigram_py])
def test_substring_rules(engine):
    """▁ only first, one script a piece (marks join any), split digits alone, unkept characters nowhere."""
    words = ["▁ab,", "▁a1"]
    w_cps, w_off = E.as_arrays(words)
    classes = np.array([-2, 1, 1, 2, -2, 1, -3], dtype=np.int32)
    cps, off, c = engine.count_substrings(w_cps, w_off, np.array([3, 1]), classes, max_length=16, min_count=1)
    got = {"".join(map(chr, cps[off[k]:off[k + 1]])): int(c[k]) for k in range(len(c))}
    assert got == {"▁a": 4, "▁ab": 3, "ab": 3}


@pytest.mark.parametrize("engine", [compiled, unigram_py])
def test_forward_backward_known_answer(engine):
    """"ab" is either the piece ab or a + b: expected counts are the two paths' posterior probabilities."""
    s = np.log(np.array([0.2, 0.3, 0.1]))  # a, b, ab
    p_cps, p_off = E.as_arrays(["a", "b", "ab"])
    w_cps, w_off = E.as_arrays(["ab", "b"])
    expected, objective = engine.e_step(p_cps, p_off, s, w_cps, w_off, np.array([10, 1]), unk_score=-50.0)
    split, whole = 0.2 * 0.3, 0.1
    p_split = split / (split + whole)
    np.testing.assert_allclose(expected, [10 * p_split, 10 * p_split + 1, 10 * (1 - p_split)], rtol=1e-12)
    assert math.isclose(objective, 10 * math.log(split + whole) + math.log(0.3), rel_tol=1e-12)
    freq = engine.viterbi_counts(p_cps, p_off, s, w_cps, w_off, np.array([10, 1]), unk_score=-50.0)
    assert freq.tolist() == [0.0, 1.0, 10.0]  # the piece "ab" (0.1) beats a + b (0.06) on the best path


@pytest.mark.parametrize("engine", [compiled, unigram_py])
def test_alternatives_and_unknown_nodes(engine):
    """A piece that is its own best path gets its second-best split; a single character has none;
    a piece whose best path is split may go; an unknown character is one node of unk_score."""
    pieces = ["a", "b", "ab", "abb", "ba"]
    s = np.log(np.array([0.3, 0.3, 0.2, 0.001, 0.1]))
    p_cps, p_off = E.as_arrays(pieces)
    kind, alt, off = engine.alternatives(p_cps, p_off, s, unk_score=-20.0)
    assert kind.tolist() == [1, 1, 2, 0, 2]
    assert alt[off[2]:off[3]].tolist() == [0, 1] and alt[off[4]:off[5]].tolist() == [1, 0]
    w_cps, w_off = E.as_arrays(["axb"])
    freq = engine.viterbi_counts(p_cps, p_off, s, w_cps, w_off, np.array([4]), unk_score=-20.0)
    assert freq.tolist() == [4.0, 4.0, 0.0, 0.0, 0.0]


def test_digamma():
    euler = 0.5772156649015329
    assert math.isclose(E.digamma(1.0), -euler, rel_tol=1e-12)
    assert math.isclose(E.digamma(0.5), -euler - 2 * math.log(2), rel_tol=1e-12)
    for x in (0.01, 0.7, 3.5, 40.0, 1e6):
        assert math.isclose(E.digamma(x + 1), E.digamma(x) + 1 / x, rel_tol=1e-12, abs_tol=1e-12)


# ------------------------------------------------------------------------------ training
def test_compiled_and_twin_train_the_same_pieces_and_scores(lines):
    runs = [vocab_of(tokkit.train(texts=lines[:700], algo="unigram", vocab_size=300, engine=engine))
            for engine in ("compiled", "python")]
    assert [p for p, _ in runs[0]] == [p for p, _ in runs[1]] and len(runs[0]) == 300
    np.testing.assert_allclose([s for _, s in runs[0]], [s for _, s in runs[1]], rtol=0, atol=1e-9)


def test_pure_python_switch_selects_the_twin(monkeypatch):
    monkeypatch.setenv("TOKKIT_PURE_PYTHON", "1")
    assert E.lattice_engine() is unigram_py
    monkeypatch.delenv("TOKKIT_PURE_PYTHON")
    assert E.lattice_engine() is compiled


def test_pieces_follow_the_rules(lines):
    tok = tokkit.train(texts=lines[:3000], algo="unigram", vocab_size=1000, max_piece_length=6)
    vocab = vocab_of(tok)
    assert [p for p, _ in vocab[:3]] == ["<pad>", "</s>", "<unk>"] and len(vocab) == 1000
    pieces = [p for p, _ in vocab[3:]]
    scores = [s for _, s in vocab[3:]]
    assert scores == sorted(scores, reverse=True) and all(s < 0 for s in scores)
    assert all(len(p) <= 6 for p in pieces)
    assert all(E.SPACE not in p[1:] for p in pieces)  # ▁ only starts a piece
    assert all(len({E.script_of(c) for c in p.lstrip(E.SPACE)} - {None}) <= 1 for p in pieces)
    assert {"▁the", "▁", "e", "t"} <= set(pieces)
    words = U.Unigram().normalized_words(tokkit.text.count.count_words(texts=lines[:3000], mode="whitespace"))
    cps, offsets = E.as_arrays(list(words))
    required = E.required_chars(cps, offsets, np.array(list(words.values())), 0.9995)
    assert set(required) <= set(pieces)  # every covered character stays


def test_split_digits_and_byte_fallback(lines, tmp_path):
    import tokenizers

    tok = tokkit.train(texts=lines[:2000] + ["2024 1999 3.14159 100000"] * 50, algo="unigram", vocab_size=600,
                       split_digits=True, byte_fallback=True)
    vocab = [p for p, _ in vocab_of(tok)]
    assert vocab[3:259] == [f"<0x{b:02X}>" for b in range(256)]
    assert not [p for p in vocab[259:] if any(c.isdigit() for c in p) and len(p) > 1]
    assert set("0123459") <= set(vocab)
    text = "in 2024 the 😀 ☃ ran"  # NFKC leaves both; neither is in the corpus
    ids = tok.encode(text)
    assert tok.token_to_id("<0xF0>") in ids and tok.token_to_id("<unk>") not in ids
    assert tok.decode(ids) == text
    tok.save(tmp_path)
    assert tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json")).encode(text).ids == ids


def test_tokenizers_and_tokkit_load_give_identical_ids(lines, tmp_path):
    import tokenizers

    tok = tokkit.train(texts=lines[:6000], algo="unigram", vocab_size=1500)
    tok.save(tmp_path)
    loaded = tokkit.load(tmp_path)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    held = lines[-1000:] + ["  spaces\tand\ttabs  ", "ＦＵＬＬ ｗｉｄｔｈ ﬁ", "", "unseen ж 漢字"]
    for line in held:
        assert loaded.encode(line) == tok.encode(line) == hf.encode(line).ids, line
    assert hf.decode(tok.encode("the  quick\tfox"), skip_special_tokens=True) == "the quick fox"


def test_bert_specials_get_the_bert_template(lines, tmp_path):
    import tokenizers

    tok = tokkit.train(texts=lines[:1000], algo="unigram", vocab_size=300, special_tokens=["[CLS]", "[SEP]"])
    assert tok.special_tokens == ["<pad>", "</s>", "<unk>", "[CLS]", "[SEP]"]
    tok.save(tmp_path)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    enc = tokkit.encode(tok, ["hello world"], max_length=16, padding="max_length", truncation=True)
    assert enc["input_ids"][0][: len(hf.encode("hello world").ids)].tolist() == hf.encode("hello world").ids
    assert hf.encode("hello world").ids[0] == tok.token_to_id("[CLS]")
    only_unk = tokkit.train(texts=lines[:300], algo="unigram", vocab_size=200, default_specials=False)
    assert only_unk.special_tokens == ["<unk>"]


def test_progress_bars_count_and_prune(lines, capsys):
    tokkit.train(texts=lines[:1000], algo="unigram", vocab_size=300, progress=True)
    err = capsys.readouterr().err
    assert "counting" in err and "pruning [" in err


def test_byte_identical_for_any_workers(lines, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines[:4000]) + "\n", encoding="utf-8")
    outs = []
    for workers in (1, 2, 3):
        out = tmp_path / f"w{workers}"
        tokkit.train(str(corpus), algo="unigram", vocab_size=800, workers=workers).save(out)
        outs.append((out / "tokenizer.json").read_bytes())
    assert outs[0] == outs[1] == outs[2]


def test_close_to_sentencepiece_in_tokens_per_word(lines):
    """A quality check, not a timing one: both trained on the same text with the same vocabulary size."""
    spm = pytest.importorskip("sentencepiece")
    train, held = lines[:8000], lines[-1000:]
    tok = tokkit.train(texts=train, algo="unigram", vocab_size=2000)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(train), model_writer=model, vocab_size=2000,
                                   model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                                   minloglevel=2, num_threads=1)
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    words = sum(len(line.split()) for line in held)
    ours = sum(len(tok.encode(line)) for line in held) / words
    theirs = sum(len(sp.encode(line)) for line in held) / words
    assert abs(ours / theirs - 1) < 0.03, (ours, theirs)


def test_bad_options_are_one_error():
    for options, match in [({"character_coverage": 0}, "character_coverage"),
                           ({"character_coverage": 1.5}, "character_coverage"),
                           ({"max_piece_length": 0}, "max_piece_length"),
                           ({"max_piece_length": "8"}, "max_piece_length"),
                           ({"normalization": "nfd"}, "normalization"),
                           ({"seed_size": -1}, "seed_size"),
                           ({"vocab_size": 10}, "vocab-size 10 is below"),
                           ({"byte_fallback": True, "vocab_size": 200}, "special and byte tokens"),
                           ({"unknown_option": 1}, "unsupported option"),
                           ({"limit_alphabet": 100}, "does not apply to unigram")]:
        options = {"vocab_size": 100, **options}
        with pytest.raises(TokkitError, match=match):
            tokkit.train(texts=["some words here and there"] * 10, algo="unigram", **options)
    with pytest.raises(TokkitError, match="empty"):
        tokkit.train(texts=["   ", "\t"], algo="unigram", vocab_size=100)


# ------------------------------------------------------------------------------ the command line
def run(args, cwd, stdin=None):
    return subprocess.run([sys.executable, "-m", "tokkit.cli", *args], cwd=cwd, input=stdin, capture_output=True,
                          timeout=300)


def test_cli_end_to_end(lines, tmp_path):
    (tmp_path / "c.txt").write_text("\n".join(lines[:1500]) + "\n", encoding="utf-8")
    proc = run(["train", "--algo", "unigram", "--vocab-size", "500", "--split-digits", "--byte-fallback",
                "--character-coverage", "0.999", "--max-piece-length", "8", "-o", "out", "c.txt"], tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert "trained unigram: 500 tokens" in proc.stderr.decode() and "pieces" in proc.stderr.decode()
    assert {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"} <= set(os.listdir(tmp_path / "out"))
    tok = tokkit.load(tmp_path / "out")
    assert tok.kind == "unigram" and tok.vocab_size == 500
    enc = run(["encode", "-t", "out"], tmp_path, stdin=b"the 2 dogs\n")
    assert enc.returncode == 0, enc.stderr.decode()
    assert [int(x) for x in enc.stdout.split()] == tok.encode("the 2 dogs")


@pytest.mark.parametrize("args,words", [
    (["--character-coverage", "0"], "--character-coverage"),
    (["--max-piece-length", "0"], "--max-piece-length"),
    (["--vocab-size", "8"], "below"),
    (["--limit-alphabet", "50"], "--character-coverage"),
])
def test_cli_bad_options_one_line_exit_2(tmp_path, args, words):
    (tmp_path / "c.txt").write_text("the cat sat on the mat\n" * 20, encoding="utf-8")
    proc = run(["train", "--algo", "unigram", *args, "c.txt"], tmp_path)
    lines = proc.stderr.decode().strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and words in lines[0] and lines[0].startswith("tokkit: error:")
    assert not (tmp_path / "tokkit-unigram").exists()


def test_cli_unigram_options_refused_for_other_algorithms(tmp_path):
    (tmp_path / "c.txt").write_text("the cat sat on the mat\n" * 20, encoding="utf-8")
    proc = run(["train", "--algo", "bpe", "--split-digits", "--byte-fallback", "c.txt"], tmp_path)
    lines = proc.stderr.decode().strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1
    assert "--byte-fallback, --split-digits apply to --algo unigram only" in lines[0]


# ------------------------------------------------------------------------------ real text
@pytest.mark.corpus
def test_multilingual_slice_matches_tokenizers_and_sentencepiece(corpus_dir, tmp_path):
    import tokenizers

    spm = pytest.importorskip("sentencepiece")
    root = corpus_dir / "multilingual"
    text = ((root / "ja_aozora" / "neko.txt").read_text(encoding="utf-8")[:150_000]
            + (root / "ko_wikipedia" / "wiki_00.txt").read_text(encoding="utf-8")[:150_000]
            + (corpus_dir / "en" / "wiki" / "000.txt").read_text(encoding="utf-8")[:300_000])
    all_lines = [line for line in text.splitlines() if line.strip()]
    random.Random(0).shuffle(all_lines)
    train, held = all_lines[:-500], all_lines[-500:]
    tok = tokkit.train(texts=train, algo="unigram", vocab_size=4000)
    tok.save(tmp_path)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert all(hf.encode(line).ids == tok.encode(line) for line in held)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(train), model_writer=model, vocab_size=4000,
                                   model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                                   minloglevel=2, num_threads=1)
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    ours = sum(len(tok.encode(line)) for line in held)
    theirs = sum(len(sp.encode(line)) for line in held)
    assert abs(ours / theirs - 1) < 0.05, (ours, theirs)


@pytest.mark.corpus
def test_english_wiki_close_to_sentencepiece(corpus_dir):
    """One Wikipedia file trains both at 8,000; a later file is held out."""
    spm = pytest.importorskip("sentencepiece")
    wiki = corpus_dir / "en" / "wiki"
    train = [line for line in (wiki / "000.txt").read_text(encoding="utf-8").splitlines() if line.strip()]
    held = [line for line in (wiki / "096.txt").read_text(encoding="utf-8").splitlines() if line.strip()][:2000]
    tok = tokkit.train(texts=train, algo="unigram", vocab_size=8000)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(train), model_writer=model, vocab_size=8000,
                                   model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                                   minloglevel=2, num_threads=1, max_sentence_length=1 << 20)
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    ours = sum(len(tok.encode(line)) for line in held)
    theirs = sum(len(sp.encode(line)) for line in held)
    assert abs(ours / theirs - 1) < 0.05, (ours, theirs)
