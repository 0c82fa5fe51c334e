"""`tokkit encode` / `tokkit decode` through the real entry point (exit codes included)."""
import subprocess
import sys

import numpy as np
import pytest

import tokkit

LINES = ["Hello world, this is tokkit.", "", "second line [SEP] with a special", "naïve café 中文"]


def run(args, stdin=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "tokkit.cli", *args], input=stdin, capture_output=True,
                          text=True, cwd=cwd)


@pytest.fixture(scope="module")
def wp(oracle_paths):
    return oracle_paths["wordpiece"]


def test_encode_then_decode_lines(wp, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    out = run(["encode", "-t", str(wp), str(src)])
    assert out.returncode == 0, out.stderr
    tok = tokkit.load(wp)
    rows = out.stdout.split("\n")[:-1]
    assert [[int(x) for x in r.split()] for r in rows] == [tok.encode(line) for line in LINES]
    back = run(["decode", "-t", str(wp)], stdin=out.stdout)
    assert back.returncode == 0, back.stderr
    assert back.stdout.split("\n")[:-1] == [tok.decode(tok.encode(line)) for line in LINES]
    # stdin and -o give the same ids
    run(["encode", "-t", str(wp), "-o", str(tmp_path / "ids.txt")], stdin="\n".join(LINES) + "\n")
    assert (tmp_path / "ids.txt").read_text() == out.stdout


def test_pairs_and_npz(wp, tmp_path):
    text = "a first text\tits pair\nanother one\tand its second half here\n"
    out = run(["encode", "-t", str(wp), "--pairs"], stdin=text)
    assert out.returncode == 0, out.stderr
    tok = tokkit.load(wp)
    expected = tokkit.encode(tok, ["a first text", "another one"], ["its pair", "and its second half here"],
                             padding=None)
    assert [[int(x) for x in r.split()] for r in out.stdout.split("\n")[:-1]] == \
        [r.tolist() for r in expected["input_ids"]]
    npz = tmp_path / "out.npz"
    out = run(["encode", "-t", str(wp), "--pairs", "--format", "npz", "-o", str(npz), "--max-length", "8"], stdin=text)
    assert out.returncode == 0, out.stderr
    data = np.load(npz)
    want = tokkit.encode(tok, ["a first text", "another one"], ["its pair", "and its second half here"],
                         max_length=8, padding="max_length")
    assert sorted(data.files) == sorted(want)
    for key in want:
        assert np.array_equal(data[key], want[key]), key


@pytest.mark.parametrize("args, stdin, message", [
    (["encode", "--pairs"], "no tab here\n", "<stdin>:1: --pairs needs a tab"),
    (["encode", "--format", "npz"], "x\n", "needs -o/--output"),
    (["decode"], "1 2 x\n", "<stdin>:1: expected space-separated integer ids"),
    (["decode"], "5\n99999999\n", "<stdin>:2: id 99999999"),
])
def test_bad_input_exits_2(wp, args, stdin, message):
    out = run([args[0], "-t", str(wp), *args[1:]], stdin=stdin)
    assert out.returncode == 2
    assert message in out.stderr and out.stderr.count("\n") == 1


def test_missing_tokenizer_and_bad_utf8(wp, tmp_path):
    out = run(["encode", "-t", str(tmp_path / "missing")], stdin="x\n")
    assert out.returncode == 2 and "no such file" in out.stderr
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff\xfe broken\n")
    out = run(["encode", "-t", str(wp), str(bad)])
    assert out.returncode == 2 and "bad.txt:2: invalid UTF-8" in out.stderr


def test_pretraining_shards_go_through_write_shards(wp, tmp_path):
    pytest.importorskip("tokkit.pretraining")
    corpus = tmp_path / "doc.txt"
    corpus.write_text("\n".join(f"Sentence number {i} is here. And another one follows it." for i in range(200))
                      + "\n", encoding="utf-8")
    out = run(["encode", "-t", str(wp), "--pretraining", "nsp", "--max-length", "32", "--seed", "3",
               "-o", str(tmp_path / "shards"), str(corpus)])
    assert out.returncode == 0, out.stderr
    assert any(p.suffix == ".npz" for p in (tmp_path / "shards").iterdir())
    missing = run(["encode", "-t", str(wp), "--pretraining", "nsp", str(corpus)])
    assert missing.returncode == 2 and "needs -o" in missing.stderr


def test_pretraining_shards_are_shuffled_unless_asked_not_to(wp, tmp_path):
    from tokkit.pretraining import ShardDataset

    corpus = tmp_path / "docs.txt"
    corpus.write_text("".join(f"Document {d} opens here. It says {d} twice.\nA second line of {d}.\n\n"
                              for d in range(300)), encoding="utf-8")
    for flag in ("--shuffle", "--no-shuffle"):
        out = run(["encode", "-t", str(wp), "--pretraining", "full", "--max-length", "16", "-q", flag,
                   "-o", str(tmp_path / flag), str(corpus)])
        assert out.returncode == 0, out.stderr
    shuffled = [int(e["document"]) for e in ShardDataset(tmp_path / "--shuffle", shuffle=False)]
    in_order = [int(e["document"]) for e in ShardDataset(tmp_path / "--no-shuffle", shuffle=False)]
    assert in_order == sorted(in_order) and shuffled != sorted(shuffled)
    assert sorted(set(shuffled)) == sorted(set(in_order)) == list(range(300))
