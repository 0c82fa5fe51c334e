"""A checkpoint whose optimizer state belongs to another model is refused before anything is used."""
import pytest

torch = pytest.importorskip("torch")

from tokkit.bert import BertConfig, BertForPreTraining  # noqa: E402
from tokkit.bert.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from tokkit.errors import TokkitError  # noqa: E402


def trained(hidden, tmp_path, name):
    torch.manual_seed(0)
    model = BertForPreTraining(BertConfig(vocab_size=40, hidden_size=hidden, num_layers=1, num_heads=2,
                                          intermediate_size=2 * hidden))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(5, 40, (2, 8))
    labels = ids.clone()
    model(ids, labels=labels).loss.backward()
    opt.step()
    save_checkpoint(tmp_path / name, model, opt, {"step": 1, "data": {"epoch": 0, "examples": 2}, "config": {}})
    return model, opt


def test_optimizer_state_of_another_size_is_refused(tmp_path):
    small, _ = trained(16, tmp_path, "small")
    big, big_opt = trained(32, tmp_path, "big")
    (tmp_path / "big" / "optimizer.safetensors").write_bytes((tmp_path / "small" / "optimizer.safetensors").read_bytes())
    fresh = torch.optim.AdamW(big.parameters(), lr=1e-3)
    with pytest.raises(TokkitError, match="optimizer.safetensors: tensor .* has shape"):
        load_checkpoint(tmp_path / "big", big, fresh)
    assert len(fresh.state) == 0  # nothing half-loaded


def test_matching_optimizer_state_round_trips(tmp_path):
    model, opt = trained(16, tmp_path, "run")
    fresh = torch.optim.AdamW(model.parameters(), lr=1e-3)
    assert load_checkpoint(tmp_path / "run", model, fresh)["step"] == 1
    p = next(model.parameters())
    assert torch.equal(fresh.state[p]["exp_avg"], opt.state[p]["exp_avg"])


def test_pretrain_refuses_to_overwrite_a_run_or_other_files(tmp_path, capsys):
    """`tokkit pretrain -o DIR`: an earlier run needs --resume or --force, other files need --force."""
    from helpers.cli import run_cli

    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text('{"kind": "train", "step": 5}\n')
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    for folder, message in ((run, "holds an earlier run"), (other, "holds no tokkit run")):
        code = run_cli(["pretrain", "-t", str(tmp_path / "no-tok"), "-o", str(folder), str(tmp_path / "c.txt"), "-q"])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and message in err[0]
    assert (run / "metrics.jsonl").read_text() == '{"kind": "train", "step": 5}\n'
    assert (other / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("args,message", [
    (["--heads", "5", "--hidden", "32"], "must be a multiple of --heads 5"),
    (["--dropout", "2"], "--dropout must be in"),
    (["--device", "quantum"], "--device 'quantum' is not a device"),
    (["--layers", "0"], "--layers must be at least 1"),
])
def test_pretrain_model_options_are_one_error_line(tmp_path, capsys, args, message):
    from helpers.cli import run_cli

    import tokkit

    tokkit.train(texts=["the cat sat on the mat"] * 20, algo="wordpiece", vocab_size=60).save(tmp_path / "tok")
    (tmp_path / "c.txt").write_text("The cat sat on the mat.\n\n" * 20)
    code = run_cli(["pretrain", "-t", str(tmp_path / "tok"), "-o", str(tmp_path / "run"), str(tmp_path / "c.txt"),
                    "--steps", "1", "-q", *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("edit,message", [
    (lambda s: s.__setitem__("step", -3), "field 'step'"),
    (lambda s: s.__setitem__("step", 10**15), "field 'step'"),
    (lambda s: s.__setitem__("step", "7"), "field 'step'"),
    (lambda s: s.pop("data"), "field 'data'"),
    (lambda s: s.__setitem__("data", {"epoch": 0, "examples": -1}), "field 'data.examples'"),
    (lambda s: s.__setitem__("rng", {"torch": "%%%"}), "field 'rng.torch'"),
    (lambda s: s.__setitem__("config", [1]), "field 'config'"),
])
def test_junk_state_json_is_one_error(tmp_path, edit, message):
    import json

    from tokkit.bert.checkpoint import read_state

    trained(16, tmp_path, "run")
    path = tmp_path / "run" / "state.json"
    state = json.loads(path.read_text())
    state.setdefault("data", {"epoch": 0, "examples": 4})
    state.setdefault("config", {})
    edit(state)
    path.write_text(json.dumps(state))
    with pytest.raises(TokkitError, match=message):
        read_state(tmp_path / "run")


def test_resume_drops_junk_metrics_lines(tmp_path):
    from tokkit.bert.run_files import Metrics as _Metrics

    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1}\nnot json\n[1]\n{"step": "x"}\n{"step": 9}\n{"step": 3}\n')
    _Metrics(path, True, start_step=5)
    assert path.read_text() == '{"step": 1}\n{"step": 3}\n'
