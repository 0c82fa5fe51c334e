"""`tokkit encode` / `decode` outputs: refused up front when unusable, never left half-written."""
import os

import numpy as np
import pytest

import tokkit
from tokkit.tokenizer import Tokenizer

from .conftest import one_error_line

LINES = "the cat sat on the mat\na quick brown fox\n\nthe lazy dog\n"


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text(LINES)
    (tmp_path / "folder").mkdir()
    (tmp_path / "afile").write_text("x")
    return tmp_path


def listing(path):
    return sorted(p.name for p in path.iterdir())


@pytest.mark.parametrize("command", ["encode", "decode"])
@pytest.mark.parametrize("output, message", [
    ("folder", "is a folder"),
    ("no/such/dir/out.txt", "does not exist"),
    ("afile/out.txt", "is not a folder"),
    ("", "is empty"),
])
def test_unusable_output_is_one_error_line(work, wp_dir, cli, command, output, message):
    before = listing(work)
    code, out, err = cli(command, "-t", str(wp_dir), "in.txt", "-o", output)
    assert code == 2 and out == ""
    assert message in one_error_line(err)
    assert listing(work) == before


@pytest.mark.parametrize("args, message", [
    (["--max-length", "-5", "--template"], "positive"),
    (["--max-length", "0", "--template"], "positive"),
    (["--max-length", "1", "--template"], "at least 3"),
    (["--max-length", "2", "--template", "--pairs"], "at least 4"),
    (["--max-length", "1", "--format", "npz", "-o", "x.npz"], "at least 3"),
    (["--max-length", "8"], "template"),
    (["--threads", "0"], "--threads"),
    (["--scheduler", "local"], "--pretraining"),
    (["--seed", "3"], "--pretraining"),
    (["--format", "npz", "-o", "x.npz", "--no-template"], "--template"),
    (["--pretraining", "full", "-o", "shards", "--pairs"], "--pairs"),
    (["--pretraining", "full", "-o", "shards", "--format", "npz"], "--format"),
    (["--pretraining", "full", "-o", "shards", "--max-length", "4"], "at least 5"),
    (["--no-shuffle"], "--pretraining"),
    (["--pretraining", "full", "-o", "shards", "--scheduler", "local", "--shuffle"], "file order"),
])
def test_bad_option_values_are_refused_before_reading(work, wp_dir, cli, args, message):
    before = listing(work)
    # The input does not exist: the option error must come first.
    code, out, err = cli("encode", "-t", str(wp_dir), "missing.txt", *args)
    assert code == 2 and out == ""
    assert message in one_error_line(err)
    assert listing(work) == before


def _interrupt_on_second_batch(monkeypatch, exc):
    import tokkit.cli.encode as encode_cli

    monkeypatch.setattr(encode_cli, "BATCH_LINES", 1)
    real = Tokenizer.encode_batch
    calls = []

    def encode_batch(self, texts, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise exc
        return real(self, texts, **kw)

    monkeypatch.setattr(Tokenizer, "encode_batch", encode_batch)
    return calls


@pytest.mark.parametrize("existing", [False, True])
def test_ctrl_c_leaves_no_partial_file(work, wp_dir, cli, monkeypatch, existing):
    if existing:
        (work / "ids.txt").write_text("old\n")
    before = listing(work)
    calls = _interrupt_on_second_batch(monkeypatch, KeyboardInterrupt())
    code, _, err = cli("encode", "-t", str(wp_dir), "in.txt", "-o", "ids.txt")
    assert len(calls) == 2 and code == 130 and "interrupted" in err
    assert listing(work) == before
    if existing:
        assert (work / "ids.txt").read_text() == "old\n"


def test_an_error_midway_leaves_no_partial_file(work, wp_dir, cli):
    (work / "bad.txt").write_bytes(b"fine line\nsecond\n\xff broken\n")
    before = listing(work)
    for args in (["-o", "ids.txt"], ["--format", "npz", "-o", "out.npz"]):
        code, _, err = cli("encode", "-t", str(wp_dir), "bad.txt", *args)
        assert code == 2 and "bad.txt:3: invalid UTF-8" in one_error_line(err)
        assert listing(work) == before


def test_outputs_are_complete_on_success(work, wp_dir, cli, wp):
    code, _, err = cli("encode", "-t", str(wp_dir), "in.txt", "-o", "ids.txt")
    assert code == 0, err
    rows = [[int(x) for x in r.split()] for r in (work / "ids.txt").read_text().split("\n")[:-1]]
    assert rows == [wp.encode(line) for line in LINES.split("\n")[:-1]]
    code, _, err = cli("encode", "-t", str(wp_dir), "in.txt", "--format", "npz", "-o", "x.npz", "--max-length", "3")
    assert code == 0, err
    data = np.load(work / "x.npz")
    assert data["input_ids"].shape == (4, 3)
    assert not [p for p in listing(work) if p.startswith(".") or p.endswith(".tmp")]
    assert isinstance(tokkit.load(wp_dir), Tokenizer)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc, where no one may create files")
@pytest.mark.parametrize("command", ["encode", "decode"])
def test_a_folder_that_refuses_files_is_one_error_line(work, wp_dir, cli, command):
    code, out, err = cli(command, "-t", str(wp_dir), "in.txt", "-o", "/proc/tokkit-out.txt")
    assert code == 2 and out == ""
    assert "/proc/tokkit-out.txt: cannot write" in one_error_line(err)
