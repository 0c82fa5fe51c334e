"""`tokkit train` from the command line: defaults, outputs, and every kind of bad input."""
import gzip
import json
import os
import signal
import subprocess
import sys
import time

import pytest


def run(args, cwd, *, stdin=None, timeout=300):
    """Run the CLI in a fresh process, as a user would."""
    return subprocess.run([sys.executable, "-m", "tokkit.cli", *args], cwd=cwd, input=stdin, capture_output=True,
                          timeout=timeout)


def error_line(proc):
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1, proc.stderr.decode()
    return lines[0]


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text("the cat sat on the mat\nthe dog sat on the log\n" * 50, encoding="utf-8")
    return path


def test_default_corpus_and_folder(tmp_path):
    proc = run(["train", "--algo", "wordpiece", "--vocab-size", "2000"], tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    out = tmp_path / "tokkit-wordpiece"
    assert {"tokenizer.json", "vocab.txt"} <= {p.name for p in out.iterdir()}
    vocab = (out / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert len(vocab) == 2000 and vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert "trained wordpiece" in proc.stderr.decode()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_wordpiece_scoring_option(tmp_path, small):
    """No --scoring trains with frequency; likelihood and pmi give their own vocabularies."""
    vocabs = {}
    for scoring in (None, "likelihood", "pmi", "frequency"):
        out = f"out-{scoring}"
        extra = [] if scoring is None else ["--scoring", scoring]
        proc = run(["train", "--algo", "wordpiece", "--vocab-size", "60", *extra, "-o", out, str(small), "-q"], tmp_path)
        assert proc.returncode == 0, proc.stderr.decode()
        vocabs[scoring] = (tmp_path / out / "vocab.txt").read_text(encoding="utf-8")
    assert vocabs[None] == vocabs["frequency"]
    assert len({vocabs["likelihood"], vocabs["pmi"], vocabs["frequency"]}) == 3
    proc = run(["train", "--algo", "bpe", "--scoring", "likelihood", str(small)], tmp_path)
    assert proc.returncode != 0 and "--scoring" in error_line(proc)


@pytest.mark.parametrize("algo,files", [("bpe", {"tokenizer.json", "vocab.json", "merges.txt"}),
                                        ("bytelevel", {"tokenizer.json", "vocab.json", "merges.txt"})])
def test_other_algorithms_write_their_files(tmp_path, small, algo, files):
    proc = run(["train", "--algo", algo, "--vocab-size", "300", "-o", "out", str(small), "-q"], tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert files <= {p.name for p in (tmp_path / "out").iterdir()}
    assert proc.stderr == b""  # --quiet


def test_stdin_directories_globs_and_compressed_files_read_alike(tmp_path, small):
    text = small.read_bytes()
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "sub" / "a.txt").write_bytes(text)
    (tmp_path / "d" / ".hidden").write_bytes(b"zzzz qqqq " * 100)
    (tmp_path / "c.txt.gz").write_bytes(gzip.compress(text))
    outs = {}
    for name, args, stdin in [("file", [str(small)], None), ("stdin", ["-"], text), ("dir", ["d"], None),
                              ("glob", ["d/**/*.txt"], None), ("gz", ["c.txt.gz"], None)]:
        proc = run(["train", "--vocab-size", "100", "-q", "-o", name, *args], tmp_path, stdin=stdin)
        assert proc.returncode == 0, (name, proc.stderr.decode())
        outs[name] = (tmp_path / name / "vocab.txt").read_bytes()
    assert len(set(outs.values())) == 1, "the same text gave different vocabularies"
    assert b"zz" not in outs["dir"]  # hidden files are skipped


def test_rerun_replaces_an_earlier_output_and_is_byte_identical(tmp_path, small):
    args = ["train", "--algo", "bytelevel", "--vocab-size", "300", "-q", "-o", "out", str(small)]
    assert run(args, tmp_path).returncode == 0
    first = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    assert run(args + ["--workers", "1"], tmp_path).returncode == 0
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == first


def test_missing_path(tmp_path):
    proc = run(["train", "nope.txt"], tmp_path)
    assert proc.returncode == 2 and "nope.txt" in error_line(proc)
    assert not (tmp_path / "tokkit-wordpiece").exists()


def test_directory_without_matching_files(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("hello")
    proc = run(["train", "d", "--glob", "*.md"], tmp_path)
    assert proc.returncode == 2 and "no" in error_line(proc) and "d" in error_line(proc)


def test_invalid_utf8_names_file_and_offset(tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"hello world\nabc \xff def\n")
    proc = run(["train", "bad.txt"], tmp_path)
    assert proc.returncode == 2
    line = error_line(proc)
    assert "bad.txt" in line and "byte 16" in line
    assert not (tmp_path / "tokkit-wordpiece").exists()
    proc = run(["train", "bad.txt", "--errors", "replace", "--vocab-size", "60", "-q"], tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()


def test_empty_corpus(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "blank.txt").write_bytes(b"\n \n\t\n")
    for name in ("empty.txt", "blank.txt"):
        proc = run(["train", name], tmp_path)
        assert proc.returncode == 2 and "empty" in error_line(proc)


def test_vocab_size_below_alphabet(tmp_path, small):
    proc = run(["train", "--algo", "bytelevel", "--vocab-size", "100", str(small)], tmp_path)
    assert proc.returncode == 2 and "vocab-size" in error_line(proc)


@pytest.mark.parametrize("specials", [["--special-token", ""], ["--special-token", "[X]", "--special-token", "[X]"]])
def test_bad_special_tokens(tmp_path, small, specials):
    proc = run(["train", str(small), *specials], tmp_path)
    assert proc.returncode == 2 and "special token" in error_line(proc)


def test_foreign_folder_needs_force(tmp_path, small):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    proc = run(["train", str(small), "-o", "out", "--vocab-size", "100"], tmp_path)
    assert proc.returncode == 2 and "--force" in error_line(proc)
    assert (tmp_path / "out" / "notes.txt").read_text() == "mine"
    proc = run(["train", str(small), "-o", "out", "--vocab-size", "100", "--force", "-q"], tmp_path)
    assert proc.returncode == 0 and not (tmp_path / "out" / "notes.txt").exists()


def test_force_never_replaces_the_current_or_temp_folder(tmp_path, small):
    (tmp_path / "keep.txt").write_text("x")
    for dest in (".", str(tmp_path), "/tmp", ".."):
        proc = run(["train", str(small), "-o", dest, "--force", "--vocab-size", "100"], tmp_path)
        line = error_line(proc)  # refused as a folder never replaced, or as one holding the input
        assert proc.returncode == 2 and ("refusing" in line or "holds the input" in line)
    assert (tmp_path / "keep.txt").exists()


def test_output_path_is_a_file(tmp_path, small):
    (tmp_path / "out").write_text("x")
    proc = run(["train", str(small), "-o", "out"], tmp_path)
    assert proc.returncode == 2 and "file" in error_line(proc)


def test_ctrl_c_leaves_no_partial_output(tmp_path):
    big = tmp_path / "big.txt"
    words = " ".join(f"w{i}x{i * 7 % 13}" for i in range(20000))
    big.write_text((words + "\n") * 60, encoding="utf-8")
    # The pure-Python engine makes the merge phase long, so the interrupt lands in the middle of it.
    env = dict(os.environ, TOKKIT_PURE_PYTHON="1")
    proc = subprocess.Popen([sys.executable, "-m", "tokkit.cli", "train", str(big), "-o", "out", "--vocab-size",
                             "200000", "--min-frequency", "1"], cwd=tmp_path, stderr=subprocess.PIPE, env=env)
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("training finished before the interrupt arrived")
    assert proc.returncode == 130, err.decode()
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["big.txt"]


def test_tokenizer_json_loads_in_tokenizers(tmp_path, small):
    tokenizers = pytest.importorskip("tokenizers")
    for algo in ("wordpiece", "bpe", "bytelevel"):
        proc = run(["train", "--algo", algo, "--vocab-size", "300", "-q", "-o", algo, str(small)], tmp_path)
        assert proc.returncode == 0, proc.stderr.decode()
        tok = tokenizers.Tokenizer.from_file(str(tmp_path / algo / "tokenizer.json"))
        spec = json.loads((tmp_path / algo / "tokenizer.json").read_text(encoding="utf-8"))
        assert [t["content"] for t in spec["added_tokens"]][:1] == ["[PAD]"]
        assert tok.encode("the cat sat").ids


def test_labelled_files_are_read_for_their_texts(tmp_path, small):
    rows = [{"text": "a brilliant film", "label": "fresh"}, {"text": "a dull film", "label": "rotten"}] * 40
    (tmp_path / "task.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "task.txt").write_text("".join(r["text"] + "\n" for r in rows), encoding="utf-8")
    for name in ("task.jsonl", "task.txt"):
        proc = run(["train", "small.txt", name, "--vocab-size", "80", "-q", "-o", name + ".tok"], tmp_path)
        assert proc.returncode == 0, proc.stderr.decode()
    vocab = (tmp_path / "task.jsonl.tok" / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert "film" in vocab and not {"label", "fresh", "text", '"', "{"} & set(vocab)
    # the same vocabulary as from the texts written out by hand: only the text field was read
    assert ((tmp_path / "task.jsonl.tok" / "tokenizer.json").read_bytes()
            == (tmp_path / "task.txt.tok" / "tokenizer.json").read_bytes())


def test_labelled_file_without_its_text_field(tmp_path):
    (tmp_path / "task.jsonl").write_text('{"sentence": "a fine film", "label": 1}\n', encoding="utf-8")
    proc = run(["train", "task.jsonl"], tmp_path)
    assert proc.returncode == 2 and "text" in error_line(proc)
    assert not (tmp_path / "tokkit-wordpiece").exists()  # nothing half-written
    proc = run(["train", "task.jsonl", "--text-field", "sentence", "--vocab-size", "40", "-q"], tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    vocab = (tmp_path / "tokkit-wordpiece" / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert {t for t in vocab if len(t) == 1} == set("a fine film") - {" "}  # the named field's text alone
