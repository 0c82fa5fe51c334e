"""tokkit.bert against transformers: load HF checkpoints, export folders the Auto* classes read."""
import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tokkit.bert import BertForPreTraining, BertModel, save_hf  # noqa: E402
from tokkit.bert.hf import load_hf  # noqa: E402
from tokkit.errors import TokkitError  # noqa: E402

V = 97


def hf_model(**kw):
    cfg = transformers.BertConfig(vocab_size=V, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=48, max_position_embeddings=40, **kw)
    torch.manual_seed(1)
    model = transformers.BertForPreTraining(cfg).eval()
    with torch.no_grad():  # random biases and LayerNorms, so a mapping mistake cannot hide behind zeros/ones
        for name, p in model.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name:
                p.add_(torch.randn_like(p) * 0.1)
    return model


def inputs():
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(0, V, (3, 12), generator=g)
    tt = torch.zeros_like(ids)
    tt[:, 6:] = 1
    am = torch.ones_like(ids)
    am[1, 8:] = 0  # padding in one row exercises the attention mask
    return ids, tt, am


def hf_outputs(model, ids, tt, am):
    with torch.no_grad():
        out = model(input_ids=ids, token_type_ids=tt, attention_mask=am, output_hidden_states=True)
    return out.hidden_states[-1], out.prediction_logits, out.seq_relationship_logits


@pytest.mark.parametrize("safe", [True, False], ids=["safetensors", "pytorch_model.bin"])
def test_load_hf_matches_transformers(tmp_path, safe):
    hf = hf_model()
    if safe:
        hf.save_pretrained(tmp_path)
    else:  # transformers 5 writes only safetensors; an old-style folder is config.json + a torch.save'd dict
        hf.config.save_pretrained(tmp_path)
        torch.save(hf.state_dict(), tmp_path / "pytorch_model.bin")
    assert (tmp_path / ("model.safetensors" if safe else "pytorch_model.bin")).exists()
    ours = load_hf(BertForPreTraining, tmp_path).eval()
    ids, tt, am = inputs()
    h, mlm, nsp = hf_outputs(hf, ids, tt, am)
    with torch.no_grad():
        out = ours(ids, tt, am)
    keep = am.bool()  # hidden states at padded positions are meaningless in both models
    assert torch.allclose(out.hidden_states[keep], h[keep], atol=1e-5)
    assert torch.allclose(out.mlm_logits[keep], mlm[keep], atol=1e-5)
    assert torch.allclose(out.nsp_logits, nsp, atol=1e-5)
    base = load_hf(BertModel, tmp_path).eval()
    with torch.no_grad():
        assert torch.allclose(base(ids, tt, am)[keep], h[keep], atol=1e-5)


def test_labelled_positions_only_match_full_logits(tmp_path):
    hf_model().save_pretrained(tmp_path)
    ours = load_hf(BertForPreTraining, tmp_path).eval()
    ids, tt, am = inputs()
    labels = torch.full_like(ids, -100)
    labels[0, 2], labels[2, 5], labels[2, 9] = 7, 8, 9
    with torch.no_grad():
        full = ours(ids, tt, am).mlm_logits
        part = ours(ids, tt, am, labels=labels)
    assert part.mlm_logits.shape == (3, V)
    assert torch.allclose(part.mlm_logits, full[labels != -100], atol=1e-6)
    ref = torch.nn.functional.cross_entropy(full[labels != -100], labels[labels != -100])
    assert torch.allclose(part.loss, ref, atol=1e-6)


def test_save_hf_loads_in_transformers(tmp_path):
    from tokkit.bert.model import BertConfig

    torch.manual_seed(5)
    ours = BertForPreTraining(BertConfig(vocab_size=V, hidden_size=32, num_heads=4, intermediate_size=48,
                                         num_layers=2, max_position_embeddings=40)).eval()
    with torch.no_grad():
        for p in ours.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    save_hf(ours, None, tmp_path / "out")
    ids, tt, am = inputs()
    with torch.no_grad():
        out = ours(ids, tt, am)
    keep = am.bool()
    hf = transformers.AutoModelForPreTraining.from_pretrained(tmp_path / "out").eval()
    h, mlm, nsp = hf_outputs(hf, ids, tt, am)
    assert torch.allclose(out.hidden_states[keep], h[keep], atol=1e-5)
    assert torch.allclose(out.mlm_logits[keep], mlm[keep], atol=1e-5)
    assert torch.allclose(out.nsp_logits, nsp, atol=1e-5)
    base = transformers.AutoModel.from_pretrained(tmp_path / "out").eval()
    with torch.no_grad():
        hb = base(input_ids=ids, token_type_ids=tt, attention_mask=am).last_hidden_state
    assert torch.allclose(out.hidden_states[keep], hb[keep], atol=1e-5)
    # and back again, through the base-model folder layout transformers writes
    base.save_pretrained(tmp_path / "base")
    again = load_hf(BertModel, tmp_path / "base").eval()
    with torch.no_grad():
        assert torch.allclose(again(ids, tt, am)[keep], h[keep], atol=1e-5)


def test_save_hf_with_tokenizer_loads_in_auto_tokenizer(tmp_path):
    from helpers.bert import load_saved_in_auto_classes, wordpiece_tokenizer

    tok = wordpiece_tokenizer(tmp_path / "tok")
    from tokkit.bert.model import BertConfig

    model = BertForPreTraining(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_heads=4,
                                          intermediate_size=48, num_layers=1))
    save_hf(model, tok, tmp_path / "out")
    load_saved_in_auto_classes(tmp_path / "out", tok, transformers.AutoModelForPreTraining)


def test_missing_and_misshaped_tensors_are_clear_errors(tmp_path):
    from safetensors.torch import load_file, save_file

    hf_model().save_pretrained(tmp_path / "a")
    state = load_file(tmp_path / "a" / "model.safetensors")
    # position_ids and the tied decoder are legitimately absent: loading still works
    state.pop("cls.predictions.decoder.weight", None)
    state.pop("bert.embeddings.position_ids", None)
    save_file(state, tmp_path / "a" / "model.safetensors")
    load_hf(BertForPreTraining, tmp_path / "a")

    bad = dict(state)
    del bad["bert.encoder.layer.1.attention.self.key.weight"]
    save_file(bad, tmp_path / "a" / "model.safetensors")
    with pytest.raises(TokkitError, match="layer.1.attention.self.key.weight"):
        load_hf(BertForPreTraining, tmp_path / "a")

    bad = dict(state)
    bad["bert.encoder.layer.0.intermediate.dense.weight"] = torch.zeros(50, 32)
    save_file(bad, tmp_path / "a" / "model.safetensors")
    with pytest.raises(TokkitError, match=r"intermediate.dense.weight has shape \(50, 32\)"):
        load_hf(BertForPreTraining, tmp_path / "a")


def test_corrupt_or_absent_checkpoint(tmp_path):
    with pytest.raises(TokkitError, match="no config.json"):
        load_hf(BertModel, tmp_path)
    hf_model().save_pretrained(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"\x10\x00\x00\x00garbage")
    with pytest.raises(TokkitError, match="corrupt"):
        load_hf(BertModel, tmp_path)
    (tmp_path / "model.safetensors").unlink()
    (tmp_path / "pytorch_model.bin").write_bytes(b"not a zip file at all")
    with pytest.raises(TokkitError, match="cannot read checkpoint"):
        load_hf(BertModel, tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 8}))
    with pytest.raises(TokkitError, match="missing key"):
        load_hf(BertModel, tmp_path)


def test_import_tokkit_does_not_import_torch():
    code = "import sys, tokkit; tokkit.TokkitError; assert 'torch' not in sys.modules, 'torch imported'"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
