"""`finetune --resume`, `finetune -m` and `pretrain --init` refuse other data: another tokenizer of
the same size, other fields of the same file, an edited state.json, and shape options that cannot
apply; each is one error line (exit 2) with the run folder unchanged."""
import json

import pytest

import tokkit

from .finetune_kit import TINY, ft_work, refused, scratch  # noqa: F401 - a fixture

torch = pytest.importorskip("torch")


def swapped_tokenizer(work, name="other"):
    """A tokenizer of the same tokens and size as tok/, two ids swapped."""
    tok = tokkit.load(work / "tok")
    vocab = [tok.id_to_token(i) for i in range(tok.vocab_size)]
    vocab[-2], vocab[-1] = vocab[-1], vocab[-2]
    (work / name).mkdir()
    (work / name / "vocab.txt").write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
    assert tokkit.load(work / name).vocab_size == tok.vocab_size
    return name


@pytest.fixture
def finished(ft_work, cli):
    """ft_work with a finished one-epoch run in out/ (resumable with more --epochs)."""
    code, _, err = cli(*scratch("--eval", "dev.jsonl"))
    assert code == 0, err
    return ft_work


def resume(*extra, tok="tok"):
    args = scratch("--eval", "dev.jsonl", "--resume", *extra)
    args[args.index("tok")] = tok
    args[args.index("--epochs") + 1] = "2"
    return args


def test_resume_with_another_tokenizer_of_the_same_size_is_refused(finished, cli):
    refused(cli, finished, resume(tok=swapped_tokenizer(finished)), "another tokenizer")


def test_resume_with_another_field_of_the_same_file_is_refused(finished, cli):
    refused(cli, finished, resume("--label-field", "other"), "--label-field", "'label'")


def test_resume_with_another_task_is_refused(finished, cli):
    args = resume()
    args[args.index("classify")] = "tag"
    refused(cli, finished, args, "classify", "--task")


@pytest.mark.parametrize("edit, field", [
    (lambda s: s["finetune"]["head"].__setitem__("labels", ["pos"]), "finetune.head"),
    (lambda s: s["finetune"].pop("head"), "finetune.head"),
    (lambda s: s["finetune"]["head"].__setitem__("labels", 5), "finetune.head"),
    (lambda s: s["finetune"]["head"].__setitem__("task", "tag"), "finetune.head"),
    (lambda s: s["finetune"]["best"].__setitem__("metric_value", "high"), "finetune.best"),
    (lambda s: s["finetune"].__setitem__("last_eval", [1]), "finetune.last_eval"),
    (lambda s: s["finetune"].__setitem__("files", None), "finetune.files"),
    (lambda s: s["config"].__setitem__("lr", "fast"), "lr"),
])
def test_an_edited_state_json_is_one_error_line(finished, cli, edit, field):
    path = finished / "out" / "checkpoint" / "state.json"
    state = json.loads(path.read_text())
    edit(state)
    path.write_text(json.dumps(state))
    refused(cli, finished, resume(), "state.json", field)


def test_resume_continues_when_nothing_differs(finished, cli):
    code, _, err = cli(*resume())
    assert code == 0, err
    assert json.loads((finished / "out" / "summary.json").read_text())["epochs"] == 2


@pytest.fixture
def pretrained(ft_work, cli):
    (ft_work / "corpus.txt").write_text("The cat sat on the mat. A dog sat on a log.\n\n" * 40, encoding="utf-8")
    code, _, err = cli("pretrain", "-t", "tok", "-o", "run", "corpus.txt", "--steps", "1", "--batch-size", "4",
                       "--max-length", "32", "-q", "--positions", "64", *TINY)
    assert code == 0, err
    return ft_work


def test_shape_options_that_cannot_apply_are_refused(pretrained, cli):
    w = pretrained
    refused(cli, w, ["pretrain", "-t", "tok", "-o", "run2", "corpus.txt", "--steps", "1", "-q", "--init", "run",
                     "--layers", "2"], "--layers", "--init")
    refused(cli, w, ["finetune", "-m", "run", "train.jsonl", "--task", "classify", "-o", "out", "-q",
                     "--layers", "2", "--max-length", "32"], "--layers", "cannot apply")
    refused(cli, w, ["finetune", "-m", "run", "train.jsonl", "--task", "classify", "-o", "out", "-q",
                     "--arch", "modernbert", "--max-length", "32"] if _arch(w) == "bert" else
            ["finetune", "-m", "run", "train.jsonl", "--task", "classify", "-o", "out", "-q", "--arch", "bert",
             "--max-length", "32"], "--arch")
    refused(cli, w, ["pretrain", "-t", "tok", "-o", "run", "corpus.txt", "--steps", "2", "-q", "--resume", "run",
                     "--layers", "3"], "--layers", "cannot apply")


def _arch(work):
    return json.loads((work / "run" / "model" / "config.json").read_text())["model_type"]


def test_init_or_model_with_another_tokenizer_of_the_same_size_is_refused(pretrained, cli):
    w = pretrained
    other = swapped_tokenizer(w)
    refused(cli, w, ["pretrain", "-t", other, "-o", "run2", "corpus.txt", "--steps", "1", "-q", "--init", "run",
                     "--max-length", "32"], "another tokenizer")
    refused(cli, w, ["finetune", "-m", "run", "-t", other, "train.jsonl", "--task", "classify", "-o", "out", "-q",
                     "--max-length", "32"], "another tokenizer")
    code, _, err = cli("finetune", "-m", "run", "-t", "tok", "train.jsonl", "--task", "classify", "-o", "out", "-q",
                       "--max-length", "32", "--epochs", "1", "--threads", "1")
    assert code == 0, err  # the folder's own tokenizer, named with -t, is accepted


def test_a_state_json_holding_a_number_of_5000_digits_is_one_error_line(finished, cli):
    path = finished / "out" / "checkpoint" / "state.json"
    text = path.read_text()
    path.write_text(text.replace('"step": ', '"step": ' + "9" * 5000 + ", \"was\": ", 1))
    refused(cli, finished, resume(), "state.json", "digits")
