"""Replaced-token detection: the generator reads the encoder's embeddings, corruption stays at the
masked positions, runs train, resume, export the encoder, and fine-tune from it."""
import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from helpers.bert import pretrain_folder  # noqa: E402

from tokkit.bert import FinetuneConfig, PretrainConfig, finetune, pretrain  # noqa: E402
from tokkit.bert.electra import Electra  # noqa: E402
from tokkit.bert.modernbert import ModernBertConfig  # noqa: E402
from tokkit.errors import TokkitError  # noqa: E402

TINY = {"num_layers": 2, "hidden_size": 32, "num_heads": 2, "intermediate_size": 48}


def small():
    torch.manual_seed(0)
    return Electra(ModernBertConfig(vocab_size=70, **TINY))


def test_the_generator_shares_the_encoders_embeddings():
    model = small()
    names = [n for n, _ in model.named_parameters()]
    assert "encoder.tok.weight" in names and not any(n.startswith("generator.tok") for n in names)
    assert model.generator.tok is model.encoder.tok
    assert len(model.state_dict()) == len(names)  # nothing saved twice
    ids = torch.randint(5, 70, (3, 10))
    labels = torch.full_like(ids, -100)
    labels[:, 2] = ids[:, 2]
    model(ids.masked_fill(labels != -100, 4), labels=labels).loss.backward()
    assert model.encoder.tok.weight.grad is not None and model.generator.layers[0].qkv.weight.grad is not None


def test_corruption_replaces_only_masked_positions():
    model = small()
    ids = torch.randint(5, 70, (2, 12))
    labels = torch.full_like(ids, -100)
    labels[0, 3], labels[1, 7] = ids[0, 3], ids[1, 7]
    masked = ids.masked_fill(labels != -100, 4)
    peaked = torch.full((2, 70), -1e4)
    peaked[0, 9] = peaked[1, ids[1, 7]] = 0.0  # the generator draws 9, then the original token
    corrupted, replaced = model.corrupt(masked, labels, peaked)
    expect = ids.clone()
    expect[0, 3] = 9
    assert torch.equal(corrupted, expect)
    assert replaced.nonzero().tolist() == ([[0, 3]] if ids[0, 3] != 9 else [])


def test_an_electra_run_trains_exports_its_encoder_and_fine_tunes(tmp_path, monkeypatch):
    from tokkit.bert import train as train_mod

    d = pretrain_folder(tmp_path)
    cfg = PretrainConfig(objective="electra", steps=6, batch_size=8, max_length=32, warmup_steps=1, threads=1,
                         checkpoint_every=3, eval_blocks=8, model=TINY)
    summary = pretrain(d / "tok", [d / "corpus.txt"], d / "run", eval_file=d / "heldout.txt", config=cfg,
                       progress=False)
    train = [json.loads(x) for x in (d / "run" / "metrics.jsonl").read_text().splitlines()]
    assert summary["steps"] == 6 and all(r["rtd_loss"] > 0 for r in train if r["kind"] == "train")
    config = json.loads((d / "run" / "model" / "config.json").read_text())
    assert config["architectures"] == ["ModernBertModel"]
    auto = transformers.AutoModel.from_pretrained(d / "run" / "model").eval()
    from tokkit.bert import ModernBertModel, load_hf

    ours = load_hf(ModernBertModel, d / "run" / "model").eval()
    ids = torch.randint(5, 100, (2, 9))
    with torch.no_grad():
        assert torch.allclose(ours(ids), auto(input_ids=ids).last_hidden_state, atol=1e-4)
    # an exact resume: a run stopped after its step-3 checkpoint ends where the whole run did
    real_step, calls = train_mod.train_step, []

    def stops_at_step_5(*a, **k):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real_step(*a, **k)

    monkeypatch.setattr(train_mod, "train_step", stops_at_step_5)
    with pytest.raises(KeyboardInterrupt):
        pretrain(d / "tok", [d / "corpus.txt"], d / "cut", eval_file=d / "heldout.txt", config=cfg, progress=False)
    monkeypatch.setattr(train_mod, "train_step", real_step)
    pretrain(d / "tok", [d / "corpus.txt"], d / "cut", eval_file=d / "heldout.txt", config=cfg, resume=d / "cut",
             progress=False)
    from safetensors.torch import load_file

    a = load_file(str(d / "run" / "checkpoint" / "model.safetensors"))
    b = load_file(str(d / "cut" / "checkpoint" / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    # fine-tuning starts from the encoder
    rows = [{"text": "the cat sat on a mat", "label": "pets"}, {"text": "people walk along the river", "label": "no"}]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows * 8), encoding="utf-8")
    out = finetune(d / "run", tmp_path / "t.jsonl", tmp_path / "ft", config=FinetuneConfig(task="classify", epochs=1),
                   progress=False)
    assert out["steps"] == 1


def test_electra_needs_modernbert():
    with pytest.raises(TokkitError, match="ModernBERT"):
        from tokkit.bert.recipe import resolve_arch

        resolve_arch(PretrainConfig(objective="electra", arch="bert"))
