"""The suite registry: every suite is one object that `tokkit bench` lists and runs; each runs on tiny inputs."""
import json

import pytest
from helpers.cli import run_cli

from tokkit.bench.corpus_slice import make_slice
from tokkit.bench.registry import SUITES, Inputs, choices, listing, names
from tokkit.bench.report import format_table
from tokkit.errors import TokkitError

pytest.importorskip("psutil")


def test_every_suite_is_listed_with_its_contenders_and_reachable_from_the_cli(capsys):
    assert run_cli(["bench", "--list"]) == 0
    printed = capsys.readouterr().out
    assert printed.strip() == listing()
    for suite in SUITES.values():
        assert f"{suite.name:<13} {suite.summary}" in printed and suite.repeat >= 1 and suite.description
        assert suite.name in choices()
    assert "checks: each contender's ids against tokkit's" in printed  # patterns
    assert names("all") == ("train", "encode", "mask", "bert")


def test_an_unknown_suite_is_one_clear_error():
    with pytest.raises(TokkitError, match="unknown suite 'nope'"):
        names("nope")
    assert run_cli(["bench", "--suite", "nope"]) == 2


@pytest.fixture(scope="module")
def tiny_slice(tmp_path_factory):
    """~60 kB of the embedded corpus as the sliced --corpus."""
    work = tmp_path_factory.mktemp("slice")
    return make_slice(None, size=60_000, workdir=str(work)), work


# The suites that run here end to end on the tiny slice; train, encode, mask and scaling run through the CLI in
# test_bench_cli.py, hub and patterns need the shared corpus (test_bench_hub.py, test_bench_patterns.py).
TINY = {"count": {}, "engine": {"vocab_size": 400}, "dask": {}, "encode-numpy": {}}


@pytest.mark.parametrize("name", sorted(TINY))
def test_registered_suite_runs_on_tiny_inputs_and_prints_its_table(name, tiny_slice, tmp_path):
    sl, _ = tiny_slice
    inputs = Inputs(threads=1, repeat=1, work=str(tmp_path), slice=sl, **TINY[name])
    rows, notes = SUITES[name].run(inputs)
    base = [r for r in rows if r.get("baseline")]
    assert base and all(r["times"] for r in base), rows
    table = format_table(rows)
    assert "tokkit" in table or base[0]["name"] in table
    json.dumps(notes)
    if name == "count":
        assert any("counts identical to the reference" in n and n.endswith("True") for n in notes)


def test_a_suite_once_reachable_only_through_its_script_runs_from_tokkit_bench(tiny_slice, tmp_path, capsys):
    sl, _ = tiny_slice
    out = tmp_path / "out"
    assert run_cli(["bench", "--suite", "engine", "--corpus", sl.path, "--vocab-size", "400", "--repeat", "1",
                    "-q", "-o", str(out)]) == 0
    data = json.loads((out / "results.json").read_text())
    assert data["suites"] == ["engine"] and data["rows"][0]["times"]
    assert SUITES["engine"].description in (out / "results.md").read_text()
    assert data["rows"][0]["name"] in capsys.readouterr().out
