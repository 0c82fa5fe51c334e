"""Labelled files and tokenizer files that used to end fine-tuning in a traceback, and valid ones
that were refused: each hostile one is one error line (exit 2) with nothing written, or one
TokkitError from the API."""
import json

import pytest

import tokkit
from tokkit.labelled import label_list, read_examples

from .finetune_kit import ft_work, refused, scratch  # noqa: F401 - a fixture

torch = pytest.importorskip("torch")

BIG = "1" * 5000  # past the 4,300 digits Python's int() reads


def _csv_with_json_answers():
    answers = '{"text": [""], "answer_start": [%s]}' % BIG
    return "id,question,context,answers\n1,who,the cat,\"%s\"\n" % answers.replace('"', '""')


@pytest.mark.parametrize("name, task, text", [
    ("big.jsonl", "classify", '{"text": "a cat", "label": %s}\n' % BIG),
    ("big.json", "classify", '[{"text": "a cat", "label": %s}]\n' % BIG),
    ("big.csv", "qa", _csv_with_json_answers()),  # a CSV answers field holds JSON too
])
def test_a_number_of_5000_digits_in_a_labelled_file_is_one_error_line(ft_work, cli, name, task, text):
    (ft_work / name).write_text(text, encoding="utf-8")
    args = scratch("--task", task)
    args[1] = name
    refused(cli, ft_work, args, name, "digits")
    with pytest.raises(tokkit.TokkitError, match="digits"):
        read_examples(ft_work / name, task)


def test_a_number_of_5000_digits_in_a_tokenizer_json_is_one_error_line(ft_work, cli):
    data = json.loads((ft_work / "tok" / "tokenizer.json").read_text(encoding="utf-8"))
    text = json.dumps(data).replace('"[UNK]": 1', '"[UNK]": %s' % BIG, 1)
    assert BIG in text
    (ft_work / "bad").mkdir()
    (ft_work / "bad" / "tokenizer.json").write_text(text, encoding="utf-8")
    with pytest.raises(tokkit.TokkitError, match="tokenizer.json.*digits"):
        tokkit.load(ft_work / "bad")
    (ft_work / "in.txt").write_text("the cat\n", encoding="utf-8")
    refused(cli, ft_work, ["encode", "-t", "bad", "in.txt", "-o", "ids.txt"], "tokenizer.json", "digits")
    args = scratch()
    args[args.index("tok")] = "bad"
    refused(cli, ft_work, args, "tokenizer.json", "digits")


@pytest.mark.parametrize("labels", [["--1", "2"], ["1" * 5000, "2"]])
def test_labels_that_look_numeric_but_are_not_sort_as_text(ft_work, cli, labels):
    rows = [{"text": f"the cat {i}", "label": labels[i % 2]} for i in range(8)]
    (ft_work / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert label_list(read_examples(ft_work / "train.jsonl", "classify"), "classify") == sorted(labels)
    code, _, err = cli(*scratch())
    assert code == 0, err


@pytest.mark.parametrize("start", [2**63, 2**64 + 5, 8])
def test_an_answer_start_past_the_context_is_one_error_line(ft_work, cli, start):
    row = {"id": "1", "question": "who", "context": "the cat", "answers": {"text": [""], "answer_start": [start]}}
    (ft_work / "qa.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    args = scratch("--task", "qa", "--max-length", "64", "--stride", "16")
    args[1] = "qa.jsonl"
    refused(cli, ft_work, args, "qa.jsonl", "answer_start[0]", "[0, 7]")
    with pytest.raises(tokkit.TokkitError, match="answer_start"):
        read_examples(ft_work / "qa.jsonl", "qa")


@pytest.mark.parametrize("suffix, sep", [(".csv", ","), (".tsv", "\t")])
def test_a_field_longer_than_csvs_default_limit_loads(ft_work, cli, suffix, sep):
    long = " ".join(["the cat sat on the mat"] * 6000)  # 137,999 characters: past csv's 131,072
    assert len(long) > 131072
    rows = [f"text{sep}label\n", f"{long}{sep}pos\n"] + [f"the dog {i}{sep}neg\n" for i in range(5)]
    (ft_work / ("train" + suffix)).write_text("".join(rows), encoding="utf-8")
    got = read_examples(ft_work / ("train" + suffix), "classify")
    assert got[0]["text"] == long and len(got) == 6
    args = scratch()
    args[1] = "train" + suffix
    code, _, err = cli(*args)
    assert code == 0, err
