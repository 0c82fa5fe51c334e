"""RESULTS.md composition: headline ratios, tables and chart links come from results.json payloads only."""
from tokkit.bench.harness import Result
from tokkit.bench.machine import machine_info
from tokkit.bench.report import group_rows, suite_markdown
from tokkit.bench.results_doc import chart_dir_for, compose, headline


def payload(suite, rows, charts=()):
    return {"command": f"tokkit bench --suite {suite}", "suites": [suite], "machine": machine_info(), "rows": rows,
            "notes": ["a note from the run"], "descriptions": {suite: f"how {suite} is measured"},
            "charts": {suite: list(charts)}, "wall_s": 90.0, "input": "1.00 MB of x"}


def test_headline_takes_the_first_contender_that_ran():
    rows = group_rows("encode", "g1", {"tokkit": Result("tokkit", [1.0]), "dead": Result("dead", [], note="failed: x"),
                                       "tiktoken": Result("tiktoken", [3.0]), "other": Result("other", [9.0])},
                      baseline="tokkit", target="speed >= 1.0x")
    rows += group_rows("encode", "g2", {"tokkit": Result("tokkit", [1.0])}, baseline="tokkit",
                       notes={"gone": "skipped"})
    assert headline(rows) == ["- g1: tokkit is 3.00x as fast as tiktoken (tokkit/x time 0.33; target speed >= 1.0x)"]


def test_compose_has_machine_tables_charts_and_notes(tmp_path):
    rows = group_rows("mask", "masking", {"tokkit": Result("tokkit", [0.5, 0.7]), "hf": Result("hf", [2.0])},
                      baseline="tokkit", work=100, unit="seq/s")
    srows = group_rows("scaling", "train: 10", {"tokkit": Result("tokkit", [4.0]), "tokenizers": Result("t", [8.0])},
                       baseline="tokkit", extra={"experiment": "e", "size_mb": 10.0, "mb": 10.0})
    md_path = tmp_path / "benchmarks" / "RESULTS.md"
    out = tmp_path / "benchmarks" / "results" / "all"
    text = compose([("Speed", payload("mask", rows, ["mask.png"]), chart_dir_for(str(md_path), str(out))),
                    ("Scaling", payload("scaling", srows, ["scaling-train-size.png"]), "results/scaling")],
                   regenerate="python benchmarks/run_all.py")
    info = machine_info()
    assert "    python benchmarks/run_all.py" in text
    assert info["cpu"] in text and f"Python {info['python']}" in text
    assert "- masking: tokkit is 3.33x as fast as hf" in text  # 2.0 / median(0.5, 0.7)
    assert "train: 10" not in text.split("## Speed")[0]  # scaling rows stay out of the headline
    assert "![mask](results/all/mask.png)" in text and "![scaling](results/scaling/scaling-train-size.png)" in text
    assert "wall time of the whole run: 1.5 min" in text and "- a note from the run" in text
    assert "| masking | **tokkit** |" in text


def test_suite_markdown_lists_charts_and_notes():
    rows = group_rows("mask", "masking", {"tokkit": Result("tokkit", [0.5])}, baseline="tokkit")
    md = suite_markdown(dict(payload("mask", rows, ["mask.png"]), chart_note="matplotlib is not installed"))
    assert md.startswith("# tokkit bench: mask") and "![mask](mask.png)" in md
    assert "- Note: a note from the run" in md and "_Charts: matplotlib is not installed_" in md


def test_compose_includes_the_quality_comparison():
    stats = {"kind": "wordpiece", "vocab_size": 10, "tokens": 5, "fertility": 1.25, "bytes_per_token": 4.0,
             "unk_rate": 0.2, "vocab_used": 0.5, "mean_token_length": 3.0, "outside_script_rate": 0.0,
             "main_script": "Latin", "longest_tokens": ["abc"], "most_frequent": [["the", 3]]}
    data = {"setting": "trained on 9 lines, evaluated on the held-out 1 lines", "chart": "compare.png",
            "results": {"wordpiece-pmi": stats, "wordpiece-frequency": dict(stats, fertility=1.5)}}
    text = compose([], regenerate="x", quality=("tokkit compare --train all", data, "results/compare"))
    assert "Command: `tokkit compare --train all`" in text
    assert "|  | wordpiece-pmi | wordpiece-frequency |" in text and "| tokens per word | 1.250 | 1.500 |" in text
    assert "![compare](results/compare/compare.png)" in text and "the (3)" in text
