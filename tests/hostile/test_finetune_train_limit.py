"""`finetune --train-limit N`: a fixed sample of N training rows, recorded in summary.json and held to on
--resume; a limit below 1 or past the file's rows is one error line, exit 2, nothing written."""
import json

import pytest

from .conftest import one_error_line
from .finetune_kit import ft_work, listing, scratch  # noqa: F401 - a fixture

torch = pytest.importorskip("torch")


def summary(work):
    return json.loads((work / "out" / "summary.json").read_text())


def test_a_limited_run_trains_on_n_rows_and_records_them(ft_work, cli):
    code, _, err = cli(*scratch("--train-limit", "5"))
    assert code == 0, err
    done = summary(ft_work)
    assert done["train_rows"] == 5 and done["config"]["train_limit"] == 5
    assert done["steps"] == 1  # 5 rows are one batch of 8; the file's 16 rows would be two
    code, _, err = cli(*scratch("--force"))
    assert code == 0, err
    assert summary(ft_work)["train_rows"] == 16 and summary(ft_work)["steps"] == 2


@pytest.mark.parametrize("limit, words", [("0", "train_limit (--train-limit) must be a whole number >= 1"),
                                          ("-3", "train_limit (--train-limit) must be a whole number >= 1"),
                                          ("17", "--train-limit 17 exceeds the file's 16 rows")])
def test_a_limit_below_one_or_past_the_rows_is_one_error_line(ft_work, cli, limit, words):
    before = listing(ft_work)
    code, out, err = cli(*scratch("--train-limit", limit))
    assert code == 2 and out == ""
    assert words in one_error_line(err)
    assert listing(ft_work) == before


def test_a_resume_keeps_to_the_sample_it_began_with(ft_work, cli):
    code, _, err = cli(*scratch("--train-limit", "8"))
    assert code == 0, err
    for other, words in ((["--train-limit", "9"], "--train-limit 8"), ([], "--train-limit 8")):
        before = listing(ft_work)
        args = scratch("--resume", *other)
        args[args.index("--epochs") + 1] = "2"
        code, out, err = cli(*args)
        assert code == 2 and words in one_error_line(err)
        assert listing(ft_work) == before
    args = scratch("--resume", "--train-limit", "8")
    args[args.index("--epochs") + 1] = "2"
    code, _, err = cli(*args)
    assert code == 0, err
    assert summary(ft_work)["steps"] == 2 and summary(ft_work)["train_rows"] == 8
