"""`tokkit bench` end to end on tiny inputs: outputs, skipped contenders, bad input, the suites' rows."""
import importlib.util
import json
from pathlib import Path

import pytest
from helpers.cli import run_cli

pytest.importorskip("psutil")


run = run_cli


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """~120 kB of English from the embedded corpus, as a file."""
    from tokkit.text.default_corpus import default_texts

    path = tmp_path_factory.mktemp("corpus") / "c.txt"
    out, size = [], 0
    for line in default_texts():
        out.append(line)
        size += len(line.encode())
        if size > 120_000:
            break
    path.write_text("".join(out), encoding="utf-8")
    return path


def test_mask_suite_writes_table_json_markdown_chart(tmp_path, capsys):
    out = tmp_path / "out"
    assert run(["bench", "--suite", "mask", "--repeat", "1", "-q", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    data = json.loads((out / "results.json").read_text())
    rows = data["rows"]
    assert data["suites"] == ["mask"] and rows[0]["name"] == "tokkit" and rows[0]["baseline"]
    assert len(rows[0]["times"]) == 1 and rows[0]["unit"] == "seq/s"
    assert rows[0]["throughput"] == pytest.approx(16384 / rows[0]["median"])
    assert data["machine"]["cores"] >= 1 and data["machine"]["libraries"]["numpy"]
    md = (out / "results.md").read_text()
    assert "| mask_tokens: 16,384" in md and data["command"] in md
    assert "tokkit" in printed and "seq/s" in printed
    if importlib.util.find_spec("matplotlib"):
        assert (out / "mask.png").read_bytes()[:4] == b"\x89PNG" and "![mask](mask.png)" in md


def test_train_suite_with_a_hidden_contender(corpus, tmp_path, monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "bpeasy" else real(name, *a))
    out = tmp_path / "out"
    assert run(["bench", "--suite", "train", "--corpus", str(corpus), "--size", "1MB", "--vocab-size", "600",
                "--repeat", "1", "--algos", "bytelevel", "-q", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    data = json.loads((out / "results.json").read_text())
    by_name = {r["name"]: r for r in data["rows"]}
    assert by_name["tokkit"]["times"] and by_name["tokkit"]["peak_rss_mb"] > 0
    assert by_name["bpeasy"]["note"] == "skipped: bpeasy is not installed"
    assert "not byte-level" in by_name["sentencepiece (bpe, not byte-level)"].get("note", "")
    if by_name["tokenizers"]["times"]:
        assert by_name["tokenizers"]["time_ratio"] == pytest.approx(
            by_name["tokkit"]["median"] / by_name["tokenizers"]["median"])
    # --size 1MB is more than the corpus holds: said on the terminal and in the results
    assert "larger than the corpus" in printed and any("larger than the corpus" in n for n in data["notes"])


@pytest.mark.slow
def test_encode_suite_rows(corpus, tmp_path):
    from tokkit.bench.corpus_slice import make_slice
    from tokkit.bench.encode_suite import run_encode_suite

    sl = make_slice([str(corpus)], size=None, workdir=str(tmp_path))
    rows, notes = run_encode_suite(sl.path, str(tmp_path), vocab_size=800, repeat=1, log=lambda m: None)
    assert notes == []  # the vocabularies were trained by tokkit
    groups = {r["group"] for r in rows}
    assert len(groups) == 9
    flat = [r for r in rows if "encode_batch_flat" in r["group"]]
    assert {r["group"] for r in flat} == {f"{kind} encode_batch_flat(lines), {th}" for kind in ("wordpiece", "bytelevel")
                                          for th in ("1 thread", "2 threads")}
    assert {r["name"] for r in flat if r["group"].startswith("bytelevel")} == {"tokkit", "gigatoken", "fastokens"}
    for r in flat:  # a contender this environment lacks is a row that says why it did not run
        assert r["times"] or r["note"].startswith("skipped: "), r
    for r in rows:
        if r["name"].startswith("tokkit"):
            assert r["times"], r
            assert r["throughput"] > 0
    whole = [r for r in rows if r["group"].startswith("bytelevel whole text")]
    assert whole[0]["work"] == pytest.approx(sl.nbytes / 1e6)


@pytest.mark.slow
def test_scaling_functions_on_tiny_sizes(corpus, tmp_path):
    from tokkit.bench.corpus_slice import make_slice
    from tokkit.bench.scaling import encode_scaling, scaling_charts, train_scaling

    sl = make_slice([str(corpus)], size=None, workdir=str(tmp_path))
    rows, notes = train_scaling(sl, str(tmp_path), algos=("wordpiece",), sizes_mb=(0.05, 0.1, 1.0), vocab_size=500,
                                vocab_sizes=(300, 600), vocab_at_mb=0.1, workers=2, repeat=1, log=lambda m: None)
    sizes = sorted({r["size_mb"] for r in rows if "size_mb" in r})
    assert sizes[0] == pytest.approx(0.05, abs=0.01) and sizes[-1] == pytest.approx(sl.mb, abs=0.01)
    assert any("uses all of it" in n for n in notes)
    assert "tokkit wordpiece trains with --scoring pmi" in notes  # the scoring the published figures used
    assert {r["vocab"] for r in rows if "vocab" in r} == {300, 600}
    erows, enotes = encode_scaling(sl.path, str(tmp_path), vocab_size=500, lengths=(1000, 20000), threads=2,
                                   repeat=1, timeout=60, log=lambda m: None)
    tok = [r for r in erows if r["name"] == "tokkit bytelevel" and r["experiment"].endswith("'a' * n")]
    assert [r["length"] for r in tok] == [1000, 20000] and all(r["times"] for r in tok)
    if importlib.util.find_spec("matplotlib"):
        names = sorted(Path(p).name for p in scaling_charts(rows + erows, str(tmp_path)))
        assert names == ["scaling-encode-length.png", "scaling-train-size.png", "scaling-train-vocab.png"]


@pytest.mark.slow
def test_bert_suite_rows():
    pytest.importorskip("torch")
    from tokkit.bench.bert_suite import run_bert_suite

    rows = run_bert_suite(repeat=2, warmup=1, log=lambda m: None, vocab=1000, batch=4, seq=16)
    assert [r["name"] for r in rows][:1] == ["tokkit"] and rows[0]["unit"] == "tokens/s"
    for r in rows:
        assert len(r["times"]) == 2, r
        assert r["throughput"] == pytest.approx(64 / r["median"])


@pytest.mark.parametrize("case", ["missing-corpus", "empty-corpus", "output-is-file", "output-under-file",
                                  "bad-size", "repeat-zero", "bad-algo"])
def test_bad_input(case, tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    afile = tmp_path / "f"
    afile.write_text("x")
    args = {"missing-corpus": ["--suite", "train", "--corpus", str(tmp_path / "nope")],
            "empty-corpus": ["--suite", "train", "--corpus", str(empty)],
            "output-is-file": ["--suite", "mask", "-o", str(afile)],
            "output-under-file": ["--suite", "mask", "-o", str(afile / "sub")],
            "bad-size": ["--size", "lots"],
            "repeat-zero": ["--repeat", "0"],
            "bad-algo": ["--algos", "bytelevel,unigram"]}[case]
    if "-o" not in args:
        args += ["-o", str(tmp_path / "out")]
    assert run(["bench", "-q", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tokkit: error:") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "results.json").exists()


@pytest.mark.slow
def test_scaling_suite_from_the_cli(corpus, tmp_path):
    out = tmp_path / "out"
    assert run(["bench", "--suite", "scaling", "--corpus", str(corpus), "--size", "50kB", "--vocab-size", "300",
                "--algos", "wordpiece", "-q", "-o", str(out)]) == 0
    data = json.loads((out / "results.json").read_text())
    rows = [r for r in data["rows"] if r.get("times")]
    assert {r["experiment"].split(",")[0] for r in rows} == {
        "train time vs corpus size (MB)", "train time vs vocab size",
        "encode time vs input length: corpus text", "encode time vs input length: 'a' * n",
        "encode time vs input length: '^' * n", "encode time vs input length: text without whitespace"}
    assert {r["length"] for r in rows if "length" in r} == {10_000}  # lengths stop at --size
    assert {r["vocab"] for r in rows if "vocab" in r} == {8000, 32000, 64000}
    assert "| train wordpiece, 0.05 MB | **tokkit wordpiece** |" in (out / "results.md").read_text()
