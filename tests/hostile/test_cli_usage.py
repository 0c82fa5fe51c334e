"""Every usage error of the `tokkit` command is one line `tokkit: error: ...` with exit code 2."""
import subprocess
import sys

import pytest

from .conftest import one_error_line

USAGE_ERRORS = [
    (["train", "--vocab-size", "x"], "--vocab-size"),
    (["train", "--workers", "1.5"], "--workers"),
    (["train", "--nope"], "--nope"),
    (["train", "--algo", "zz"], "--algo"),
    (["train", "-o"], "-o"),
    (["encode", "in.txt"], "--tokenizer"),
    (["encode", "-t"], "-t"),
    (["encode", "-t", "x", "--format", "csv"], "--format"),
    (["decode", "--bogus"], "--bogus"),
    (["no-such-command"], "no-such-command"),
    (["--nope"], "--nope"),
]


@pytest.mark.parametrize("args, names", USAGE_ERRORS)
def test_usage_errors_are_one_line(cli, args, names):
    code, out, err = cli(*args)
    assert code == 2 and out == ""
    assert names in one_error_line(err)


def test_usage_error_through_the_entry_point():
    proc = subprocess.run([sys.executable, "-m", "tokkit.cli", "train", "--min-frequency", "two"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "--min-frequency" in one_error_line(proc.stderr)


@pytest.mark.parametrize("args", [["--help"], ["train", "--help"], ["encode", "-h"]])
def test_help_is_unchanged(cli, args):
    code, out, err = cli(*args)
    assert code == 0 and err == ""
    assert out.startswith("Usage: tokkit") and "Options:" in out and len(out.splitlines()) > 5


def test_error_messages_with_line_breaks_stay_one_line(cli, tmp_path):
    name = str(tmp_path / "two\nlines\x0b.txt")
    code, _, err = cli("train", name, "-o", str(tmp_path / "out"))
    assert code == 2 and "no such file" in one_error_line(err)


@pytest.mark.parametrize("args, message", [
    (["train", "c.txt", "-o", ""], "is empty"),
    (["train", "c.txt", "--min-word-count", "3"], "--scheduler"),
    (["train", "c.txt", "--min-word-count", "-1"], "--min-word-count"),
    (["train", "c.txt", "--workers", "0"], "workers"),
    (["train", "c.txt", "--vocab-size", "0"], "--vocab-size"),
    (["train", "c.txt", "--min-frequency", "-1"], "--min-frequency"),
    (["train", "c.txt", "--limit-alphabet", "0"], "--limit-alphabet"),
])
def test_train_refuses_what_it_used_to_accept_silently(cli, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text("the cat sat on the mat\n" * 20)
    code, _, err = cli(*args)
    assert code == 2 and message in one_error_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


def test_glob_without_a_folder_is_refused(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text("the cat sat on the mat\n" * 20)
    code, _, err = cli("train", "c.txt", "--glob", "*.md", "-o", "out")
    assert code == 2 and "--glob" in one_error_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


@pytest.mark.parametrize("command", ["train", "encode", "decode", "stats", "compare", "pretrain", "export", "bench"])
def test_an_empty_output_path_is_refused_by_every_command(cli, command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(command, "-o", "")
    line = one_error_line(err)
    assert code == 2 and "--output" in line and "is empty" in line
    assert list(tmp_path.iterdir()) == []


def test_a_scheduler_that_is_not_an_address_is_one_error_line(tmp_path, capsys):
    from helpers.cli import run_cli

    (tmp_path / "c.txt").write_text("some words\n" * 10)
    code = run_cli(["train", "--algo", "wordpiece", "-q", "-o", str(tmp_path / "t"), "--scheduler", "not a url",
                    str(tmp_path / "c.txt")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "expected 'local' or an address" in err[0]
