"""`tokkit pretrain` on labelled files: their texts only, mixed with text files, resumed only on the same
files and fields; a missing field or a file without text is one error line, exit 2, nothing written."""
import json

import pytest

from .conftest import one_error_line
from .test_pretrain_inputs import DOCS, TINY, listing, work  # noqa: F401

torch = pytest.importorskip("torch")

ROWS = [{"text": f"The cat sat on the mat {i} times.", "review": f"A dog sat on a log {i}.", "label": i % 2}
        for i in range(12)]


@pytest.fixture
def labelled(work):  # noqa: F811
    (work / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return work


def run_args(*corpus, extra=()):
    return ["pretrain", "-t", "tok", "-o", "run", *corpus, "--steps", "6", "--batch-size", "4",
            "--max-length", "16", "-q", *TINY, *extra]


def test_a_labelled_file_and_a_text_file_make_one_corpus(labelled, cli):
    code, out, err = cli(*run_args("corpus.txt", "train.jsonl"))
    assert code == 0, err
    summary = json.loads((labelled / "run" / "summary.json").read_text())
    size = (labelled / "train.jsonl").stat().st_size
    assert summary["corpus"] == [["corpus.txt", len(DOCS)], ["train.jsonl", size, "text", "text_pair"]]


def test_a_small_labelled_file_is_read_for_many_epochs(labelled, cli):
    code, out, err = cli(*run_args("train.jsonl", extra=("--text-field", "review")))
    assert code == 0, err
    summary = json.loads((labelled / "run" / "summary.json").read_text())
    assert summary["steps"] == 6 and summary["epochs"] >= 2  # 12 short rows are about 3 blocks of 16 tokens
    assert summary["corpus"][0][2] == "review"


def test_a_resume_with_another_text_field_is_refused(labelled, cli):
    code, _, err = cli(*run_args("train.jsonl", extra=("--steps", "2")))
    assert code == 0, err
    code, out, err = cli(*run_args("train.jsonl", extra=("--resume", "run", "--text-field", "review")))
    assert code == 2 and out == ""
    assert "other text fields" in one_error_line(err)
    code, _, err = cli(*run_args("train.jsonl", extra=("--resume", "run")))
    assert code == 0, err


@pytest.mark.parametrize("rows, extra, message", [
    (ROWS, ("--text-field", "sentence"), "train.jsonl: line 1: field 'sentence' is missing"),
    ([{"text": "", "label": 1}, {"text": " ", "label": 0}], (), "no text to pretrain on"),
    ([{"text": ["a", "list"], "label": 1}], (), "field 'text': expected a string"),
])
def test_a_labelled_file_without_its_text_is_one_error_line_and_leaves_nothing(labelled, cli, rows, extra, message):
    (labelled / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    before = listing(labelled)
    for shuffle in ("--shuffle", "--no-shuffle"):
        code, out, err = cli(*run_args("corpus.txt", "train.jsonl", extra=(*extra, shuffle)))
        assert code == 2 and out == ""
        assert message in one_error_line(err)
        assert listing(labelled) == before
