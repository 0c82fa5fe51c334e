"""`tokkit pretrain` and `tokkit export` under hostile options, files and checkpoints: one error line,
exit 2, nothing left behind; and every command refuses an output that is one of its inputs."""
import base64
import json

import pytest

from .conftest import one_error_line

torch = pytest.importorskip("torch")

TINY = ["--layers", "1", "--hidden", "32", "--heads", "2", "--ffn", "32", "--positions", "64", "--threads", "1"]
DOCS = "".join(f"Title {d}\n\nThe cat sat on the mat {d} times. A dog sat on a log.\nThe quick fox ran off.\n\n"
               for d in range(40))


@pytest.fixture
def work(tmp_path, monkeypatch, wp_dir):
    """A folder with corpus.txt, heldout.txt and the tokenizer as tok/, and the CLI's cwd there."""
    (tmp_path / "corpus.txt").write_text(DOCS, encoding="utf-8")
    (tmp_path / "heldout.txt").write_text(DOCS[:2000], encoding="utf-8")
    import shutil

    shutil.copytree(wp_dir, tmp_path / "tok")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def pretrain_args(*extra, out="run"):
    return ["pretrain", "-t", "tok", "-o", out, "corpus.txt", "--steps", "2", "--batch-size", "4",
            "--max-length", "32", "-q", *TINY, *extra]


def listing(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("extra, message", [
    (["--log-every", "0"], "log_every"),
    (["--max-time", "nan"], "max_time"),
    (["--max-time", "inf"], "max_time"),
    (["--lr", "inf"], "lr"),
    (["--lr", "nan"], "lr"),
    (["--clip", "nan"], "clip"),
    (["--eval-every-seconds", "inf"], "eval_every_seconds"),
    (["--seed", "-1"], "seed"),
    (["--shuffle-buffer", "-5"], "shuffle_buffer"),
    (["--device", "cuda:7"], "cuda:7"),
    (["--device", "meta"], "meta"),
    (["--batch-size", "10000"], "fewer examples than one batch"),
    (["--eval-file", "specials.txt"], "no ordinary tokens"),
])
def test_bad_settings_are_one_error_line_and_leave_nothing(work, cli, extra, message):
    (work / "specials.txt").write_text("[CLS] [SEP]\n[MASK] [PAD]\n", encoding="utf-8")
    if extra[:2] == ["--device", "cuda:7"] and torch.cuda.device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    before = listing(work)
    code, out, err = cli(*pretrain_args(*extra))
    assert code == 2 and out == ""
    assert message in one_error_line(err)
    assert listing(work) == before  # nothing written: not even metrics.jsonl


def test_a_refused_run_does_not_block_the_next_one(work, cli):
    code, _, err = cli(*pretrain_args("--batch-size", "10000"))
    assert code == 2 and "fewer examples" in one_error_line(err)
    code, _, err = cli(*pretrain_args())
    assert code == 0, err
    assert json.loads((work / "run" / "summary.json").read_text())["steps"] == 2


def test_a_diverging_run_stops_with_an_error(work, cli):
    code, _, err = cli(*pretrain_args("--lr", "1e30", "--steps", "20", "--checkpoint-every", "1"))
    assert code == 2
    line = one_error_line(err)
    assert "diverged" in line and "lower --lr" in line
    state = json.loads((work / "run" / "checkpoint" / "state.json").read_text())
    from safetensors.torch import load_file

    weights = load_file(str(work / "run" / "checkpoint" / "model.safetensors"))
    assert state["step"] >= 1 and all(torch.isfinite(w).all() for w in weights.values())  # the last good state


def edited_checkpoint(work, cli, edit):
    code, _, err = cli(*pretrain_args())
    assert code == 0, err
    path = work / "run" / "checkpoint" / "state.json"
    state = json.loads(path.read_text())
    edit(state)
    path.write_text(json.dumps(state))


@pytest.mark.parametrize("edit, message", [
    (lambda s: s["rng"].__setitem__("torch", base64.b64encode(b"\x01" * 40).decode()), "rng.torch"),
    (lambda s: s["rng"].__setitem__("cuda", "abc"), "rng.cuda"),
    (lambda s: s["model_config"].__setitem__("num_heads", 4), "num_heads"),
    (lambda s: s["model_config"].__setitem__("num_heads", 3), "num_heads"),
    (lambda s: s["model_config"].__setitem__("num_layers", 2), "num_layers"),
    (lambda s: s["model_config"].__setitem__("num_layers", 10**9), "num_layers"),
    (lambda s: s["model_config"].__setitem__("hidden_size", 10**9), "hidden_size"),
    (lambda s: s["config"].__setitem__("lr", "fast"), "lr"),
    (lambda s: s.__setitem__("tokenizer_sha256", 7), "tokenizer_sha256"),
])
def test_an_edited_checkpoint_is_one_error_line(work, cli, edit, message):
    edited_checkpoint(work, cli, edit)
    code, out, err = cli(*pretrain_args("--steps", "4"), "--resume", "run")
    assert code == 2 and out == ""
    assert message in one_error_line(err)
    if message != "lr":  # the training settings do not matter to an export, the rest does
        code, out, err = cli("export", "run", "-o", "exported")
        assert code == 2 and message in one_error_line(err) and not (work / "exported").exists()


def test_a_checkpoint_from_another_tokenizer_of_the_same_size_is_refused(work, cli):
    import tokkit

    code, _, err = cli(*pretrain_args())
    assert code == 0, err
    tok = tokkit.load(work / "tok")
    vocab = [tok.id_to_token(i) for i in range(tok.vocab_size)]
    k = len(vocab) - 1
    vocab[k - 1], vocab[k] = vocab[k], vocab[k - 1]  # the same tokens and size, two ids swapped
    (work / "other").mkdir()
    (work / "other" / "vocab.txt").write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
    assert tokkit.load(work / "other").vocab_size == tok.vocab_size
    code, _, err = cli("pretrain", "-t", "other", "-o", "run", "corpus.txt", "--steps", "4", "--resume", "run", "-q")
    assert code == 2 and "another tokenizer" in one_error_line(err)
    code, _, err = cli("export", "run", "-t", "other", "-o", "exported")
    assert code == 2 and "another tokenizer" in one_error_line(err)


@pytest.mark.parametrize("args", [
    ["train", "corpus.txt", "-o", "corpus.txt", "--vocab-size", "60"],
    ["train", "data", "-o", "data/tok", "--vocab-size", "60"],
    ["train", "data/in.txt", "-o", "data", "--vocab-size", "60", "--force"],
    ["encode", "-t", "tok", "corpus.txt", "-o", "corpus.txt"],
    ["encode", "-t", "tok", "corpus.txt", "-o", "tok/ids.txt"],
    ["encode", "-t", "tok", "--pretraining", "full", "data", "-o", "data/shards"],
    ["decode", "-t", "tok", "ids.txt", "-o", "ids.txt"],
    ["stats", "-t", "tok", "corpus.txt", "-o", "corpus.txt"],
    ["pretrain", "-t", "tok", "data", "-o", "data/run", "--steps", "1"],
    ["pretrain", "-t", "tok", "corpus.txt", "-o", "run", "--eval-file", "run/heldout.txt", "--force"],
    ["export", "run", "-o", "run/checkpoint"],
])
def test_an_output_that_is_an_input_is_refused_before_any_work(work, cli, args):
    (work / "data").mkdir()
    (work / "data" / "in.txt").write_text(DOCS, encoding="utf-8")
    (work / "ids.txt").write_text("5 6 7\n", encoding="utf-8")
    (work / "run").mkdir()
    (work / "run" / "heldout.txt").write_text(DOCS[:500], encoding="utf-8")
    (work / "run" / "checkpoint").mkdir()
    (work / "run" / "checkpoint" / "state.json").write_text("{}")
    before = {p: p.read_bytes() for p in work.rglob("*") if p.is_file()}
    code, out, err = cli(*args)
    assert code == 2
    assert "write it elsewhere" in one_error_line(err)
    assert {p: p.read_bytes() for p in work.rglob("*") if p.is_file()} == before
