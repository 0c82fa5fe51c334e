"""The benchmark harness: subprocess timing, worker processes, process-tree RSS, corpus slices, reports."""
import json
import math
import os
import sys
import textwrap
from pathlib import Path

import pytest

from tokkit._files import prepare_folder as prepare_output
from tokkit.bench.corpus_slice import make_slice
from tokkit.bench.harness import Result, measure_alternating, measure_tasks, python_cmd, run_once
from tokkit.bench.report import format_table, group_rows, markdown_table, write_json
from tokkit.errors import TokkitError
from tokkit.text.corpus import parse_size

W = "tokkit.bench.worker:"


def test_run_once_measures_the_process_tree():
    # a child process holding 150 MB: the parent alone would show ~10 MB
    code = ("import subprocess, sys; subprocess.run([sys.executable, '-c', "
            "'b = bytearray(150_000_000); import time; [b.__setitem__(i, 1) for i in range(0, len(b), 4096)]; "
            "time.sleep(0.3)'])")
    wall, rss = run_once(python_cmd(code))
    assert wall > 0.3 and rss > 150


def test_run_once_failure_names_the_last_stderr_line():
    with pytest.raises(RuntimeError, match="exit code 3: ValueError: bad thing"):
        run_once(python_cmd("import sys; print('noise', file=sys.stderr); sys.exit('ValueError: bad thing') "
                            "if False else (print('ValueError: bad thing', file=sys.stderr), sys.exit(3))"))


def test_measure_alternating_runs_in_turn_and_keeps_going_after_a_failure():
    log = []
    res = measure_alternating({"a": python_cmd("pass"), "bad": python_cmd("raise SystemExit(1)"),
                               "b": python_cmd("pass")}, repeat=2, log=log.append)
    assert len(res["a"].times) == len(res["b"].times) == 2
    assert res["bad"].note.startswith("failed") and not res["bad"].times
    order = [line.split(": ")[1] for line in log]
    assert order == ["a", "b", "a", "b", "a", "b"]  # warm-up round, then two alternating rounds


def test_worker_times_inside_the_process_and_samples_its_memory():
    res = measure_tasks({"sleep": (W + "sleeper", {"seconds": 0.05, "megabytes": 120}),
                         "noop": (W + "noop", {})}, repeat=3)
    s, n = res["sleep"], res["noop"]
    assert len(s.times) == 3 and all(0.05 <= t < 0.5 for t in s.times)
    assert n.median < 0.01  # interpreter start-up and imports stay outside the timer
    assert s.peak_rss_mb > n.peak_rss_mb + 100


def test_worker_failures_and_timeouts_become_notes():
    # The bound covers the worker's start-up (interpreter and imports), which a loaded machine slows down.
    res = measure_tasks({"setup": (W + "failing", {"message": "no vocab"}),
                         "import": ("no_such_module_xyz:f", {}),
                         "slow": (W + "sleeper", {"seconds": 30}),
                         "ok": (W + "noop", {})}, repeat=1, timeout=8.0)
    assert res["setup"].note == "failed: RuntimeError: no vocab"
    assert "ModuleNotFoundError" in res["import"].note
    assert "timed out" in res["slow"].note
    assert len(res["ok"].times) == 1


def test_prepare_runs_outside_the_timer(tmp_path):
    (tmp_path / "prep_task.py").write_text(textwrap.dedent("""
        import time
        def task():
            def run():
                pass
            run.prepare = lambda: time.sleep(0.2)
            return run
    """))
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    res = measure_tasks({"p": ("prep_task:task", {})}, repeat=2, env=env)
    assert len(res["p"].times) == 2 and max(res["p"].times) < 0.1


def test_group_rows_ratios_and_notes():
    rows = group_rows("s", "g", {"other": Result("other", [2.0, 4.0, 6.0]), "tokkit": Result("tokkit", [1.0, 2.0])},
                      baseline="tokkit", work=12.0, unit="MB/s", notes={"gone": "skipped: gone is not installed"},
                      target="x >= 2")
    assert [r["name"] for r in rows] == ["tokkit", "other", "gone"]
    base, other, gone = rows
    assert base["median"] == 1.5 and base["throughput"] == 8.0 and base["target"] == "x >= 2"
    assert other["time_ratio"] == pytest.approx(1.5 / 4.0) and other["speedup"] == pytest.approx(4.0 / 1.5)
    assert gone["note"].startswith("skipped") and not gone["times"]
    table = format_table(rows)
    assert "8.0 MB/s" in table and "2.67x" in table and "skipped: gone is not installed" in table
    md = markdown_table(rows).splitlines()
    assert md[2].startswith("| g | **tokkit** |") and md[3].startswith("|  | other |")


def test_write_json_turns_nan_into_null(tmp_path):
    write_json(str(tmp_path / "r.json"), {"x": math.nan, "rows": [{"m": float("nan")}]})
    assert json.loads((tmp_path / "r.json").read_text()) == {"x": None, "rows": [{"m": None}]}


def test_prepare_output_errors(tmp_path):
    afile = tmp_path / "f"
    afile.write_text("x")
    with pytest.raises(TokkitError, match="is a file"):
        prepare_output(str(afile))
    with pytest.raises(TokkitError, match="cannot create"):
        prepare_output(str(afile / "sub"))
    assert prepare_output(str(tmp_path / "new" / "dir")) and (tmp_path / "new" / "dir").is_dir()


def test_slice_is_a_line_aligned_prefix_across_files(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    tmp_path = tmp_path / "corpus"
    tmp_path.mkdir()
    (tmp_path / "a.txt").write_text("one\ntwo")  # no final newline: the join adds one
    (tmp_path / "b.txt").write_text("three\nfour\n")
    s = make_slice([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")], size=14, workdir=str(work))
    assert Path(s.path).read_text() == "one\ntwo\nthree\n" and s.nbytes == 14 and not s.note
    full = make_slice([str(tmp_path)], size=None, workdir=str(work), name="all")
    assert Path(full.path).read_text() == "one\ntwo\nthree\nfour\n"


def test_slice_bigger_than_corpus_says_so(tmp_path):
    (tmp_path / "a.txt").write_text("x y z\n" * 10)
    s = make_slice([str(tmp_path / "a.txt")], size=parse_size("1MB"), workdir=str(tmp_path))
    assert s.nbytes == 60 and "larger than the corpus" in s.note


def test_slice_of_default_corpus_and_bad_inputs(tmp_path):
    s = make_slice(None, size=2000, workdir=str(tmp_path))
    assert 0 < s.nbytes <= 2000 and Path(s.path).read_text(encoding="utf-8").endswith("\n")
    (tmp_path / "empty.txt").write_text("\n \n")
    with pytest.raises(TokkitError, match="empty"):
        make_slice([str(tmp_path / "empty.txt")], size=None, workdir=str(tmp_path))
    with pytest.raises(TokkitError, match="no such file"):
        make_slice([str(tmp_path / "missing.txt")], size=None, workdir=str(tmp_path))
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\xfe\n")
    with pytest.raises(TokkitError, match="UTF-8"):
        make_slice([str(tmp_path / "bad.txt")], size=None, workdir=str(tmp_path))


@pytest.mark.parametrize("text,expected", [("10MB", 10_000_000), ("512", 512), ("1.5 kb", 1500),
                                           ("1GiB", 2**30), ("3m", 3_000_000)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["ten", "10XB", "0", "-5MB", ""])
def test_parse_size_refuses(text):
    with pytest.raises(TokkitError):
        parse_size(text)


def test_charts_are_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    from tokkit.bench.charts import bar_chart, line_chart

    rows = group_rows("s", "g", {"tokkit": Result("tokkit", [1.0, 2.0]), "o": Result("o", [3.0])},
                      baseline="tokkit", work=1.0, unit="MB/s")
    rows += group_rows("s", "h", {"tokkit": Result("tokkit", [1.0])}, baseline="tokkit")
    p = bar_chart(rows, str(tmp_path / "bar.png"), title="t")
    q = line_chart({"tokkit": [(1, 1.0), (2, 2.1)], "o": [(1, 3.0), (2, 6.0)]}, str(tmp_path / "line.png"),
                   title="t", xlabel="MB")
    for path in (p, q):
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert bar_chart([r for r in rows if not r.get("times")], str(tmp_path / "none.png"), title="t") is None


def test_charts_skipped_with_a_note_without_matplotlib(monkeypatch, tmp_path):
    from tokkit.bench import charts, run

    monkeypatch.setattr(charts, "have_matplotlib", lambda: False)
    payload = {"suites": ["mask"], "rows": [], "charts": {}}
    run._charts(payload, str(tmp_path), charts)
    assert "matplotlib is not installed" in payload["chart_note"] and not list(tmp_path.iterdir())


def test_worker_module_runs_standalone():
    import subprocess

    p = subprocess.run([sys.executable, "-m", "tokkit.bench.worker"], input='{"setup": "nope"}\n', text=True,
                       capture_output=True)
    assert p.returncode == 1 and "error" in json.loads(p.stdout)


def test_blocks_rotate_the_lead_and_time_only_after_the_block_warmup():
    log = []
    res = measure_tasks({"a": (W + "noop", {}), "b": (W + "noop", {})}, repeat=2, warmup=0, block=2,
                        block_warmup=1, rotate=True, log=log.append)
    turns = [tuple(line.split(": ")[:2]) for line in log]
    assert turns == [("  warm-up", "a"), ("  round 1", "a"), ("  round 1", "a"),
                     ("  warm-up", "b"), ("  round 1", "b"), ("  round 1", "b"),
                     ("  warm-up", "b"), ("  round 2", "b"), ("  round 2", "b"),
                     ("  warm-up", "a"), ("  round 2", "a"), ("  round 2", "a")]
    assert len(res["a"].times) == len(res["b"].times) == 4 == len(res["a"].rss_mb)


def test_worker_reports_cpu_time_and_the_task_summary():
    res = measure_tasks({"busy": (W + "busy", {"n": 3_000_000}), "sleep": (W + "sleeper", {"seconds": 0.05})},
                        repeat=2, warmup=1)
    busy, sleep = res["busy"], res["sleep"]
    assert len(busy.cpu_times) == len(sleep.cpu_times) == 2
    assert sleep.cpu_median < busy.cpu_median  # sleeping costs no CPU, counting does
    assert busy.summary == {"runs": 3}  # the warm-up run counts too; the summary is the latest
    assert sleep.summary is None
    row = group_rows("s", "g", res, baseline="busy", work=10.0, unit="MB/s")[0]
    assert row["cpu_median"] == busy.cpu_median and row["cpu_throughput"] == pytest.approx(10.0 / busy.cpu_median)
    assert row["summary"] == {"runs": 3}


def test_setup_time_and_close_hook(tmp_path):
    closed = tmp_path / "closed"
    (tmp_path / "hook_task.py").write_text(textwrap.dedent(f"""
        import time
        def task():
            time.sleep(0.3)
            def run():
                pass
            run.close = lambda: open({str(closed)!r}, "w").write("done")
            return run
    """))
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    res = measure_tasks({"h": ("hook_task:task", {})}, repeat=1, env=env)
    assert res["h"].setup_s >= 0.3 and res["h"].as_dict()["setup_s"] == res["h"].setup_s
    assert closed.read_text() == "done"  # called when the worker was told to quit


def test_ratios_per_unit_of_work_when_contenders_do_different_amounts():
    rows = group_rows("s", "g", {"tokkit": Result("tokkit", [2.0]), "ref": Result("ref", [1.0])},
                      baseline="tokkit", work={"tokkit": 100.0, "ref": 5.0}, unit="MB/s")
    base, ref = rows
    assert base["throughput"] == 50.0 and ref["throughput"] == 5.0 and ref["work"] == 5.0
    assert ref["speedup"] == pytest.approx(10.0) and ref["time_ratio"] == pytest.approx(0.1)


def test_require_psutil_names_the_fix(monkeypatch):
    from tokkit.bench import harness

    harness.require_psutil()  # installed here: no error
    monkeypatch.setattr(harness, "psutil", None)  # what the guarded import leaves without the extra
    with pytest.raises(TokkitError, match=r"needs psutil.*tokkit\[bench\]"):
        harness.require_psutil()
