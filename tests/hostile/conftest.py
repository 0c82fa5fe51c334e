"""Fixtures for the hostile-input tests: a small trained tokenizer and the CLI run in-process."""
from pathlib import Path

import pytest

import tokkit

HERE = Path(__file__).resolve().parent

TEXT = ("the cat sat on the mat. the dog sat on the log.\n"
        "a quick brown fox jumps over the lazy dog.\n") * 40


@pytest.fixture(scope="session")
def wp_dir(tmp_path_factory):
    """A WordPiece tokenizer folder with the BERT specials."""
    folder = tmp_path_factory.mktemp("wp")
    tok = tokkit.train(texts=TEXT.splitlines(), algo="wordpiece", vocab_size=120)
    tok.save(folder)
    return folder


@pytest.fixture(scope="session")
def wp(wp_dir):
    return tokkit.load(wp_dir)


@pytest.fixture
def cli(capsys):
    """Run `tokkit ARGS...` in this process; returns (exit code, stdout, stderr)."""
    from tokkit.cli import main

    def run(*args):
        capsys.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
        out, err = capsys.readouterr()
        return code, out, err

    return run


def one_error_line(err: str) -> str:
    """The single `tokkit: error: ...` line of `err`; fails when there is anything else."""
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), repr(err)
    assert lines[0].startswith("tokkit: error: "), repr(err)
    return lines[0]


def pytest_collection_modifyitems(items):
    """Mark every test of this folder `hostile`, so `pytest -m hostile` runs them alone."""
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.hostile)
