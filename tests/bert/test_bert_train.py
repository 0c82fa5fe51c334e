"""The pretraining loop end to end on tiny data: loss goes down, exact resume, files, bad input."""
import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from helpers.bert import pretrain_folder, tiny_corpus, wordpiece_tokenizer  # noqa: E402

from tokkit.bert import PretrainConfig, pretrain  # noqa: E402
from tokkit.bert import train as train_mod  # noqa: E402
from tokkit.errors import TokkitError  # noqa: E402

TINY_MODEL = dict(num_layers=1, hidden_size=32, num_heads=2, intermediate_size=64, max_position_embeddings=64)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return pretrain_folder(tmp_path_factory.mktemp("pretrain"))


def config(**kw):
    base = dict(steps=24, batch_size=8, max_length=32, lr=3e-3, warmup_steps=4, log_every=1,
                checkpoint_every=10, eval_blocks=24, threads=1, model=TINY_MODEL)
    return PretrainConfig(**{**base, **kw})


def losses(run):
    return [json.loads(ln) for ln in (run / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("objective", ["mlm", "mlm+nsp"])
def test_loss_goes_down_and_files_are_written(setup, tmp_path, objective):
    run = tmp_path / "run"
    summary = pretrain(setup / "tok", [setup / "corpus.txt"], run, eval_file=setup / "heldout.txt",
                       config=config(objective=objective, steps=40, eval_every=20), progress=False)
    recs = losses(run)
    train = [r["mlm_loss"] for r in recs if r["kind"] == "train"]
    assert sum(train[-5:]) / 5 < sum(train[:5]) / 5 - 0.5
    nsp = [r["nsp_loss"] for r in recs if r["kind"] == "train"]
    assert (max(nsp) > 0) == (objective == "mlm+nsp")
    evals = [r for r in recs if r["kind"] == "eval"]
    assert [e["step"] for e in evals] == [20, 40]
    ev = summary["final_eval"]
    assert 0 <= ev["mask_acc"] <= 1 and 0 <= ev["labelled_acc"] <= 1 and ev["baseline_mask_acc"] > 0
    assert ev["perplexity"] == pytest.approx(2.718281828 ** ev["mlm_loss"], rel=1e-6)
    assert ev["mask_acc_ratio"] == pytest.approx(ev["mask_acc"] / ev["baseline_mask_acc"])
    assert {"model.safetensors", "optimizer.safetensors", "state.json"} <= {
        p.name for p in (run / "checkpoint").iterdir()}
    assert not list((run / "checkpoint").glob("*.pt")) and not list(run.glob("*.bin"))
    state = json.loads((run / "checkpoint" / "state.json").read_text())
    assert state["step"] == 40 and state["data"]["examples"] >= 0 and "torch" in state["rng"]
    assert (run / "loss_curve.png").stat().st_size > 1000
    assert summary["steps"] == 40


@pytest.mark.parametrize("arch", ["modernbert", "bert"])
def test_resume_gives_the_same_losses(setup, tmp_path, monkeypatch, arch):
    pretrain(setup / "tok", [setup / "corpus.txt"], tmp_path / "a", config=config(arch=arch), progress=False)
    real_step, calls = train_mod.train_step, []

    def dies_at_step_15(*a, **k):
        calls.append(1)
        if len(calls) == 15:
            raise KeyboardInterrupt
        return real_step(*a, **k)

    monkeypatch.setattr(train_mod, "train_step", dies_at_step_15)
    with pytest.raises(KeyboardInterrupt):
        pretrain(setup / "tok", [setup / "corpus.txt"], tmp_path / "b", config=config(arch=arch), progress=False)
    monkeypatch.setattr(train_mod, "train_step", real_step)
    # the interrupted run kept its last good checkpoint
    assert json.loads((tmp_path / "b" / "checkpoint" / "state.json").read_text())["step"] == 10
    pretrain(setup / "tok", [setup / "corpus.txt"], tmp_path / "b", config=config(arch=arch), resume=tmp_path / "b",
             progress=False)
    a, b = losses(tmp_path / "a"), losses(tmp_path / "b")
    assert [r["step"] for r in a] == [r["step"] for r in b]
    assert [r["loss"] for r in a] == [r["loss"] for r in b]
    from safetensors.torch import load_file

    wa = load_file(str(tmp_path / "a" / "checkpoint" / "model.safetensors"))
    wb = load_file(str(tmp_path / "b" / "checkpoint" / "model.safetensors"))
    assert all(torch.equal(wa[k], wb[k]) for k in wa)


def test_bad_inputs(setup, tmp_path):
    tok = setup / "tok"
    corpus = [setup / "corpus.txt"]
    nomask = tmp_path / "nomask"
    wordpiece_tokenizer(nomask, vocab_size=80, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    with pytest.raises(TokkitError, match=r"\[MASK\]"):
        pretrain(nomask, corpus, tmp_path / "r0", config=config(), progress=False)
    with pytest.raises(TokkitError, match="exceeds the model's 64 positions"):
        pretrain(tok, corpus, tmp_path / "r1", config=config(max_length=65), progress=False)
    with pytest.raises(TokkitError, match="does not exist"):
        pretrain(tok, corpus, tmp_path / "r2", config=config(), resume=tmp_path / "nowhere", progress=False)
    # a checkpoint trained with another vocabulary
    pretrain(tok, corpus, tmp_path / "r3", config=config(steps=2), progress=False)
    other = tmp_path / "other"
    wordpiece_tokenizer(other, texts=tiny_corpus(240).splitlines(), vocab_size=120)
    with pytest.raises(TokkitError, match="another tokenizer"):
        pretrain(other, corpus, tmp_path / "r4", config=config(steps=4), resume=tmp_path / "r3", progress=False)
    # a corrupt checkpoint
    (tmp_path / "r3" / "checkpoint" / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}")
    with pytest.raises(TokkitError, match="corrupt|do not match"):
        pretrain(tok, corpus, tmp_path / "r5", config=config(steps=4), resume=tmp_path / "r3", progress=False)
    (tmp_path / "r3" / "checkpoint" / "state.json").write_text("{not json")
    with pytest.raises(TokkitError, match="corrupt"):
        pretrain(tok, corpus, tmp_path / "r5", config=config(steps=4), resume=tmp_path / "r3", progress=False)


def test_cli_pretrain(setup, tmp_path):
    from click.testing import CliRunner

    from tokkit.cli import cli

    args = ["pretrain", "-t", str(setup / "tok"), "-o", str(tmp_path / "run"), str(setup / "corpus.txt"),
            "--steps", "3", "--batch-size", "4", "--max-length", "32", "--layers", "1", "--hidden", "32",
            "--heads", "2", "--ffn", "64", "--positions", "64", "--threads", "1", "-q"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["steps"] == 3
    res = CliRunner().invoke(cli, args[:-1] + ["--max-length", "100"], standalone_mode=False)
    assert isinstance(res.exception, TokkitError)


def test_a_checkpoint_from_before_shuffling_resumes_in_file_order(setup, tmp_path):
    """A checkpoint an earlier tokkit wrote (no tokenizer copy or fingerprint, no config in the
    model's metadata, no `shuffle` setting) resumes, reading the corpus in file order as it did."""
    from safetensors.torch import load_file, save_file

    runs = {name: tmp_path / name for name in ("old", "new")}
    for run in runs.values():
        pretrain(setup / "tok", [setup / "corpus.txt"], run, config=config(steps=10, shuffle=False), progress=False)
    ckpt = runs["old"] / "checkpoint"
    save_file(load_file(str(ckpt / "model.safetensors")), str(ckpt / "model.safetensors"), metadata={"format": "pt"})
    state = json.loads((ckpt / "state.json").read_text())
    del state["tokenizer_sha256"], state["config"]["shuffle"], state["config"]["shuffle_buffer"]
    (ckpt / "state.json").write_text(json.dumps(state))
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        (ckpt / name).unlink()
    for run in runs.values():
        summary = pretrain(setup / "tok", [setup / "corpus.txt"], run, config=config(steps=14), resume=run,
                           progress=False)
        assert summary["steps"] == 14 and summary["config"]["shuffle"] is False
    assert [r["loss"] for r in losses(runs["old"])] == [r["loss"] for r in losses(runs["new"])]
    assert json.loads((ckpt / "state.json").read_text())["tokenizer_sha256"]  # fingerprinted from now on


def test_a_resume_refuses_other_corpus_files_or_order(setup, tmp_path):
    second = tmp_path / "second.txt"
    second.write_text(tiny_corpus(30, seed=3), encoding="utf-8")
    files = [setup / "corpus.txt", second]
    pretrain(setup / "tok", files, tmp_path / "run", config=config(steps=4, checkpoint_every=2), progress=False)
    for other in ([second, setup / "corpus.txt"], [setup / "corpus.txt"]):
        with pytest.raises(TokkitError, match="other corpus files or another order"):
            pretrain(setup / "tok", other, tmp_path / "run", config=config(steps=6), resume=tmp_path / "run",
                     progress=False)
    summary = pretrain(setup / "tok", files, tmp_path / "run", config=config(steps=6), resume=tmp_path / "run",
                       progress=False)
    assert summary["steps"] == 6
