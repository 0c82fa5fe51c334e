"""`--max-length auto` for `finetune` and for `pretrain` on labelled files: the length fitted to the
training rows, printed once and recorded in summary.json; where it cannot apply, one error line."""
import json

import pytest

from .conftest import one_error_line
from .finetune_kit import ft_work, listing, scratch  # noqa: F401 - a fixture
from .finetune_kit import TINY

torch = pytest.importorskip("torch")


def test_finetune_fits_the_length_to_the_training_rows_and_says_so_once(ft_work, cli):
    args = scratch("--max-length", "auto")
    args.remove("-q")
    code, out, err = cli(*args)
    assert code == 0, err
    said = [line for line in err.splitlines() if "--max-length auto" in line]
    assert len(said) == 1 and said[0].startswith("--max-length auto: 8 tokens")  # 5 words + [CLS] [SEP] -> 8
    summary = json.loads((ft_work / "out" / "summary.json").read_text())
    assert summary["max_length"] == summary["config"]["max_length"] == 8 and summary["max_length_auto"] is True
    config = json.loads((ft_work / "out" / "config.json").read_text())
    assert config["tokkit"]["max_length"] == 8  # evaluate and predict read rows at the fitted length


@pytest.mark.parametrize("extra, words", [
    (["--task", "qa", "--max-length", "auto"], "auto applies to classify, regress and tag"),
    (["--max-length", "long"], "neither a whole number nor 'auto'"),
])
def test_finetune_refuses_auto_where_it_cannot_apply(ft_work, cli, extra, words):
    before = listing(ft_work)
    code, out, err = cli(*scratch(*extra))
    assert code == 2 and words in one_error_line(err)
    assert listing(ft_work) == before


def pretrain(*corpus, extra=()):
    return ["pretrain", "-t", "tok", "-o", "run", *corpus, "--steps", "2", "--batch-size", "2", "--max-length", "auto",
            "-q", *TINY, *extra]


def test_pretrain_fits_the_length_to_a_labelled_corpus_within_the_positions(ft_work, cli):
    code, _, err = cli(*pretrain("train.jsonl"))
    assert code == 0, err
    summary = json.loads((ft_work / "run" / "summary.json").read_text())
    assert summary["max_length"] == summary["config"]["max_length"] == 8
    rows = [{"text": " ".join(["cat"] * 40), "label": "x"}] * 4
    (ft_work / "long.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, _, err = cli(*pretrain("long.jsonl", extra=("--positions", "24", "--force")))
    assert code == 0, err
    assert json.loads((ft_work / "run" / "summary.json").read_text())["max_length"] == 24


def test_pretrain_auto_on_text_files_or_shards_is_one_error_line(ft_work, cli):
    (ft_work / "corpus.txt").write_text("The cat sat.\nOn the mat.\n\n" * 20, encoding="utf-8")
    code, _, err = cli("encode", "-t", "tok", "corpus.txt", "--pretraining", "full", "--max-length", "16", "-o",
                       "shards", "-q")
    assert code == 0, err
    before = listing(ft_work)
    for corpus, words in (("corpus.txt", "the corpus holds none"), ("shards", "a shard folder's examples")):
        code, out, err = cli(*pretrain(corpus))
        assert code == 2 and words in one_error_line(err)
        assert listing(ft_work) == before
