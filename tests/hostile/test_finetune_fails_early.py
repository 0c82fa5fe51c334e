"""Bad data that fine-tuning used to find only after training began (or after a whole epoch) is
found before the first step: one error line naming the file, exit 2, and no output folder."""
import json

import pytest

import tokkit

from .conftest import one_error_line
from .finetune_kit import TINY, ft_work, listing, scratch, write_jsonl  # noqa: F401 - a fixture

torch = pytest.importorskip("torch")
from tokkit.bert import FinetuneConfig, finetune  # noqa: E402


def refused_before_any_step(cli, work, args, *words, monkeypatch=None):
    before = listing(work)
    code, out, err = cli(*args)
    line = one_error_line(err)
    assert code == 2 and out == "", err
    assert all(w in line for w in words), line
    assert listing(work) == before  # no OUT, not even metrics.jsonl
    return line


def no_steps(monkeypatch):
    """Make any training step fail the test: the refusal must come before the first one."""
    import tokkit.bert.finetune_run as run

    def step(*args, **kwargs):
        raise AssertionError("a training step ran")

    monkeypatch.setattr(run.Finetuning, "step", step)


def test_a_regression_dev_label_that_is_no_number_is_found_before_training(ft_work, cli, monkeypatch):
    write_jsonl(ft_work / "reg.jsonl", [{"text": f"the cat {i}", "label": str(i)} for i in range(8)])
    write_jsonl(ft_work / "regdev.jsonl", [{"text": "a dog", "label": "1.5"}, {"text": "a cat", "label": "high"}])
    no_steps(monkeypatch)
    args = scratch("--task", "regress", "--eval", "regdev.jsonl")
    args[1] = "reg.jsonl"
    refused_before_any_step(cli, ft_work, args, "regdev.jsonl", "line 2", "'high'")


@pytest.mark.parametrize("rows, extra", [
    ([{"tokens": [], "tags": []}] * 4, []),                                # every row empty
    ([{"tokens": ["the", "cat"], "tags": ["O", "N"]}] * 4, ["--max-length", "2"]),  # no room for a word
])
def test_tagging_rows_with_no_labelled_word_are_refused_not_reported_as_divergence(ft_work, cli, monkeypatch,
                                                                                   rows, extra):
    write_jsonl(ft_work / "tags.jsonl", rows)
    no_steps(monkeypatch)
    args = scratch("--task", "tag", *extra)
    args[1] = "tags.jsonl"
    line = refused_before_any_step(cli, ft_work, args, "tags.jsonl")
    assert "diverged" not in line


def test_a_batch_of_empty_tagging_rows_trains_with_a_finite_loss(ft_work, cli):
    rows = [{"tokens": ["the", "cat"], "tags": ["O", "N"]}] * 2 + [{"tokens": [], "tags": []}] * 6
    write_jsonl(ft_work / "tags.jsonl", rows)
    args = scratch("--task", "tag", "--log-every", "1")
    args[args.index("--batch-size") + 1] = "2"
    args[1] = "tags.jsonl"
    code, _, err = cli(*args)
    assert code == 0, err  # some batches hold only empty rows: loss 0, not NaN
    losses = [json.loads(line)["loss"] for line in (ft_work / "out" / "metrics.jsonl").read_text().splitlines()
              if json.loads(line)["kind"] == "train"]
    assert len(losses) == 4 and 0.0 in losses and all(loss == loss for loss in losses)


def test_a_token_type_the_model_lacks_is_refused_before_the_first_step(ft_work, cli, monkeypatch):
    tok = json.loads((ft_work / "tok" / "tokenizer.json").read_text(encoding="utf-8"))
    for piece in tok["post_processor"]["pair"][3:]:
        next(iter(piece.values()))["type_id"] = 5
    (ft_work / "tok5").mkdir()
    (ft_work / "tok5" / "tokenizer.json").write_text(json.dumps(tok), encoding="utf-8")
    write_jsonl(ft_work / "pairs.jsonl", [{"text": "the cat", "text_pair": "a dog", "label": "ab"[i % 2]}
                                          for i in range(8)])
    no_steps(monkeypatch)
    args = scratch("--arch", "bert")
    args[1], args[args.index("tok")] = "pairs.jsonl", "tok5"
    refused_before_any_step(cli, ft_work, args, "pairs.jsonl", "token type 5", "type_vocab_size")
    with pytest.raises(tokkit.TokkitError, match="token type 5"):
        finetune(None, ft_work / "pairs.jsonl", ft_work / "api", config=FinetuneConfig(task="classify", threads=1),
                 tokenizer=ft_work / "tok5", from_scratch=True, arch="bert", progress=False,
                 model_settings={"num_layers": 1, "hidden_size": 16, "num_heads": 2, "intermediate_size": 16})
    assert not (ft_work / "api").exists()
