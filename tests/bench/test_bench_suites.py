"""The suites behind the benchmarks/ scripts, on tiny inputs: what each measures and reports."""
import importlib.util
import json

import pytest

pytest.importorskip("psutil")

TEXT = ("The cat sat on the mat. It's 42 degrees!\n" * 300 + "Ünïcödé wörds, ﬁne.\n" * 100
        + "tokkit counts words; tokenizers too.\n" * 200)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    (d / "a.txt").write_text(TEXT, encoding="utf-8")
    (d / "b.txt").write_text(TEXT[: len(TEXT) // 3], encoding="utf-8")
    return d


def test_count_suite_checks_times_and_extrapolates(corpus, tmp_path):
    from tokkit.bench.corpus_slice import make_slice
    from tokkit.bench.count_suite import REFERENCES, run_count_suite

    data = make_slice([str(corpus)], size=None, workdir=str(tmp_path), name="all")
    check = make_slice([str(corpus)], size=5000, workdir=str(tmp_path), name="check")
    modes = ("gpt2", "bert") if importlib.util.find_spec("tokenizers") else ("gpt2",)
    rows, checks = run_count_suite(data.path, data.mb, check_path=check.path, check_mb=check.mb, modes=modes,
                                   repeat=2, log=lambda m: None)
    assert checks == {m: True for m in modes}
    for mode in modes:
        tk, ref = [r for r in rows if r["mode"] == mode]
        assert tk["baseline"] and tk["name"] == "tokkit" and ref["name"] == REFERENCES[mode]
        assert len(tk["times"]) == len(ref["times"]) == 2 and len(tk["cpu_times"]) == 2
        s = tk["summary"]
        assert s["chunks"] == 1 and s["distinct"] > 10 and s["words"] > 1000
        assert ref["speedup"] == pytest.approx((ref["median"] / ref["work"]) / (tk["median"] / tk["work"]))
    gpt2_ref = next(r for r in rows if r["mode"] == "gpt2" and not r["baseline"])
    assert gpt2_ref["work"] == pytest.approx(data.mb) and "extrapolated_s" not in gpt2_ref
    if "bert" in modes:
        bert_ref = next(r for r in rows if r["mode"] == "bert" and not r["baseline"])
        assert bert_ref["work"] == pytest.approx(check.mb)
        assert bert_ref["extrapolated_s"] == pytest.approx(bert_ref["median"] * data.mb / check.mb)


def test_count_suite_without_the_gpt2_reference(corpus, tmp_path):
    from tokkit.bench.corpus_slice import make_slice
    from tokkit.bench.count_suite import run_count_suite

    data = make_slice([str(corpus)], size=None, workdir=str(tmp_path))
    rows, checks = run_count_suite(data.path, data.mb, check_path=data.path, check_mb=data.mb, modes=("gpt2",),
                                   repeat=1, reference=False, log=lambda m: None)
    assert [r["name"] for r in rows] == ["tokkit"] and checks == {"gpt2": True}


def test_engine_suite_loads_once_and_caches(corpus, tmp_path):
    from tokkit.bench.engine_suite import build_words, run_engine_suite

    files = [str(corpus / "a.txt")]
    cache = tmp_path / "words.npz"
    rows = run_engine_suite(files, vocab_size=300, repeat=2, cache=str(cache), log=lambda m: None)
    (row,) = rows
    assert len(row["times"]) == 2 and len(row["cpu_times"]) == 2 and row["setup_s"] > 0
    symbols, offsets, counts = build_words(files)
    assert row["summary"]["distinct"] == len(counts) and row["summary"]["occurrences"] == int(counts.sum())
    assert 0 < row["summary"]["merges"] <= 300 - 256
    assert cache.exists()
    again = run_engine_suite(files, vocab_size=300, engine="python", repeat=1, cache=str(cache), log=lambda m: None)
    assert again[0]["name"] == "python" and again[0]["summary"] == row["summary"]  # same table, same merges


@pytest.mark.slow
def test_mask_suite_shape_options_and_without_numpy():
    from tokkit.bench.mask_suite import HF, masked_sequences, run_mask_suite

    rows = run_mask_suite(sequences=100, batch=32, length=16, repeat=1, numpy=False, log=lambda m: None)
    names = [r["name"] for r in rows]
    assert names[0] == "tokkit" and "numpy (plain vectorised)" not in names and HF in names
    assert rows[0]["group"].startswith("mask_tokens: 96 x 16 int64 in batches of 32")
    assert rows[0]["throughput"] == pytest.approx(masked_sequences(100, 32) / rows[0]["median"])


@pytest.mark.slow
def test_dask_suite_compares_tables_and_estimates(corpus):
    pytest.importorskip("distributed")
    from tokkit.bench.dask_suite import DASK, LOCAL, estimate_hours, run_dask_suite

    out = run_dask_suite([str(corpus)], repeat=1, merge_paths=[str(corpus / "a.txt")], merge_vocab=300,
                         log=lambda m: None)
    rows = {r["name"]: r for r in out["rows"]}
    assert rows[LOCAL]["baseline"] and len(rows[DASK]["times"]) == 1
    assert out["identical"] and out["summary"]["distinct"] > 10 and out["startup_s"] > 0
    assert out["per_worker_mb_s"] == pytest.approx(rows[DASK]["throughput"] / 2)
    assert out["estimates"][10] == pytest.approx(estimate_hours(out["per_worker_mb_s"], 10))
    assert out["merge"]["merge_s"] >= 0 and out["merge"]["distinct"] > 10


@pytest.mark.slow
def test_bert_suite_blocks_and_bf16_group():
    pytest.importorskip("torch")
    from tokkit.bench.bert_suite import BF16, run_bert_suite

    rows = run_bert_suite(repeat=2, warmup=0, block=2, block_warmup=1, rotate=True, bf16=True, log=lambda m: None,
                          vocab=500, batch=2, seq=8)
    groups = {}
    for r in rows:
        groups.setdefault(r["group"], []).append(r)
    assert len(groups) == 2
    main, bf16 = groups.values()
    assert main[0]["name"] == "tokkit" and all(len(r["times"]) == 4 for r in main)
    assert bf16[0]["name"] == BF16 and bf16[0]["baseline"] and len(bf16) == len(main)  # bf16 vs transformers


def test_results_md_from_the_parts_json(tmp_path):
    from tokkit.bench.harness import Result
    from tokkit.bench.machine import machine_info
    from tokkit.bench.report import group_rows
    from tokkit.bench.results_doc import regenerate, run_commands

    runs = run_commands(corpus="c", size="1MB", scaling_corpus=["c", "d"], scaling_size="2MB", repeat="1",
                        output="out")
    assert runs["scaling"] == ["bench", "--suite", "scaling", "--corpus", "c", "--corpus", "d", "--size", "2MB",
                               "--repeat", "1", "-o", "out/scaling"]
    assert "--repeat" not in runs["compare"]
    results = tmp_path / "results"
    (results / "all").mkdir(parents=True)
    rows = group_rows("mask", "masking", {"tokkit": Result("tokkit", [0.5]), "hf": Result("hf", [2.0])},
                      baseline="tokkit")
    (results / "all" / "results.json").write_text(json.dumps(
        {"command": "tokkit bench --suite mask", "suites": ["mask"], "machine": machine_info(), "rows": rows,
         "charts": {"mask": ["mask.png"]}}))
    md = tmp_path / "RESULTS.md"
    logged = []
    # nothing to rerun (only= names no part): RESULTS.md is composed from the JSON already there
    regenerate(str(tmp_path), runs, only="none", results_md=str(md), results_dir=str(results),
               regenerate_command="python benchmarks/run_all.py", log=logged.append)
    text = md.read_text()
    assert not logged and "- masking: tokkit is 4.00x as fast as hf" in text
    assert "![mask](results/all/mask.png)" in text and "Scaling" not in text and "compare" not in text.lower()
