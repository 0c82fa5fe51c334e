"""tokkit's ModernBERT against transformers' ModernBertForMaskedLM, in both directions."""
import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tokkit.bert import save_hf  # noqa: E402
from tokkit.bert.hf import load_hf  # noqa: E402
from tokkit.bert.modernbert import ModernBertConfig, ModernBertForMaskedLM, ModernBertModel  # noqa: E402
from tokkit.errors import TokkitError  # noqa: E402

V = 101
T = 40          # longer than the local window below: local layers really are local
WINDOW = 16


def hf_model(**kw):
    args = dict(vocab_size=V, hidden_size=32, num_hidden_layers=4, num_attention_heads=4, intermediate_size=24,
                max_position_embeddings=64, local_attention=WINDOW, pad_token_id=0, bos_token_id=1,
                eos_token_id=2, cls_token_id=1, sep_token_id=2, global_rope_theta=1000.0,
                local_rope_theta=50.0, attn_implementation="sdpa")
    cfg = transformers.ModernBertConfig(**{**args, **kw})
    torch.manual_seed(1)
    model = transformers.ModernBertForMaskedLM(cfg).eval()
    with torch.no_grad():  # non-trivial norms and bias, so a mapping mistake cannot hide behind ones/zeros
        for name, p in model.named_parameters():
            if "norm" in name or name.endswith("bias"):
                p.add_(torch.randn_like(p) * 0.1)
            if "Wqkv" in name:  # sharp attention, so positions and the window visibly matter
                p.mul_(15.0)
    return model


def inputs():
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(3, V, (3, T), generator=g)
    am = torch.ones_like(ids)
    am[1, 25:] = 0   # padding: the local layers' band and the padding mask meet
    am[2, 5:] = 0    # padding far beyond the window from any real token
    ids[am == 0] = 0
    return ids, am


def hf_outputs(model, ids, am):
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=am, output_hidden_states=True)
    return out.hidden_states[-1], out.logits


def _close(a, b, keep):
    return (a[keep] - b[keep]).abs().max().item()


def test_layer_kinds_follow_global_every():
    cfg = ModernBertConfig(vocab_size=10, num_layers=7, global_every=3)
    assert cfg.layer_types == ["global", "local", "local", "global", "local", "local", "global"]
    with pytest.raises(ValueError):
        ModernBertConfig(vocab_size=10, hidden_size=30, num_heads=2)  # odd head size: no rotary pairs


def test_local_mask_is_a_band_of_half_the_window():
    model = ModernBertModel(ModernBertConfig(vocab_size=10, hidden_size=16, num_heads=2, intermediate_size=8,
                                             num_layers=2, local_window=4))
    masks = model.masks(6, None, "cpu")
    assert masks["global"] is None
    band = masks["local"]
    assert band[0].tolist() == [True, True, True, False, False, False]
    assert band[3].tolist() == [False, True, True, True, True, True]
    am = torch.tensor([[1, 1, 1, 1, 0, 0]])
    masks = model.masks(6, am, "cpu")
    assert masks["global"].shape == (1, 1, 6, 6)
    assert masks["global"][0, 0, 0].tolist() == [True, True, True, True, False, False]
    assert masks["global"][0, 0, 5].tolist() == [True, True, True, True, False, True]  # a pad query sees itself


def test_load_hf_matches_transformers(tmp_path):
    hf = hf_model()
    hf.save_pretrained(tmp_path / "hf")
    ids, am = inputs()
    h_ref, logits_ref = hf_outputs(hf, ids, am)
    ours = load_hf(ModernBertForMaskedLM, tmp_path / "hf").eval()
    assert ours.config.layer_types == ["global", "local", "local", "global"]
    assert ours.config.local_window == WINDOW and ours.config.local_rope_theta == 50.0
    with torch.no_grad():
        out = ours(ids, attention_mask=am)
    keep = am.bool()
    assert _close(out.hidden_states, h_ref, keep) < 1e-5
    assert _close(out.mlm_logits, logits_ref, keep) < 1e-5
    # the bare encoder reads the same folder
    base = load_hf(ModernBertModel, tmp_path / "hf").eval()
    with torch.no_grad():
        assert _close(base(ids, attention_mask=am), h_ref, keep) < 1e-5


def test_window_and_theta_matter():
    # The parity above would be vacuous if the band or the thetas changed nothing at this length.
    hf = hf_model()
    ids, am = inputs()
    h_ref, _ = hf_outputs(hf, ids, am)
    with torch.no_grad():
        for change in ({"local_attention": 1000}, {"local_rope_theta": 10_000.0}):
            other = hf_model(**change)
            other.load_state_dict(hf.state_dict())
            h, _ = hf_outputs(other, ids, am)
            assert _close(h, h_ref, am.bool()) > 1e-3


def test_save_hf_loads_in_transformers(tmp_path):
    torch.manual_seed(0)
    cfg = ModernBertConfig(vocab_size=V, hidden_size=32, num_heads=4, intermediate_size=24, num_layers=4,
                           local_window=WINDOW, max_position_embeddings=64, global_rope_theta=2000.0)
    ours = ModernBertForMaskedLM(cfg).eval()
    with torch.no_grad():
        for name, p in ours.named_parameters():
            if "norm" in name or "bias" in name:
                p.add_(torch.randn_like(p) * 0.1)
    save_hf(ours, None, tmp_path / "out")
    conf = json.loads((tmp_path / "out" / "config.json").read_text())
    assert conf["model_type"] == "modernbert" and conf["architectures"] == ["ModernBertForMaskedLM"]
    hf = transformers.AutoModelForMaskedLM.from_pretrained(tmp_path / "out", attn_implementation="sdpa").eval()
    assert type(hf).__name__ == "ModernBertForMaskedLM"
    ids, am = inputs()
    h_ref, logits_ref = hf_outputs(hf, ids, am)
    with torch.no_grad():
        out = ours(ids, attention_mask=am)
    keep = am.bool()
    assert _close(out.hidden_states, h_ref, keep) < 1e-5
    assert _close(out.mlm_logits, logits_ref, keep) < 1e-5
    # labelled positions only (the training path) give the same logits as the full pass
    labels = torch.full_like(ids, -100)
    labels[0, [3, 30]] = ids[0, [3, 30]]
    with torch.no_grad():
        sparse = ours(ids, attention_mask=am, labels=labels)
    assert torch.allclose(sparse.mlm_logits, out.mlm_logits[0, [3, 30]], atol=1e-5)
    assert sparse.nsp_logits is None and int(sparse.mlm_count) == 2


def test_save_hf_with_tokenizer_loads_in_auto_classes(tmp_path):
    from helpers.bert import load_saved_in_auto_classes, wordpiece_tokenizer

    tok = wordpiece_tokenizer(tmp_path / "tok")
    model = ModernBertForMaskedLM(ModernBertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_heads=4,
                                                   intermediate_size=24, num_layers=2,
                                                   pad_token_id=tok.token_to_id("[PAD]")))
    save_hf(model, tok, tmp_path / "out")
    hf = load_saved_in_auto_classes(tmp_path / "out", tok, transformers.AutoModelForMaskedLM)
    assert hf.config.cls_token_id == tok.token_to_id("[CLS]")


def test_wrong_architecture_and_unsupported_configs_are_clear_errors(tmp_path):
    hf_model().save_pretrained(tmp_path / "modern")
    from tokkit.bert import BertForPreTraining

    with pytest.raises(TokkitError, match="modernbert"):
        load_hf(BertForPreTraining, tmp_path / "modern")
    conf = json.loads((tmp_path / "modern" / "config.json").read_text())
    conf["mlp_bias"] = True
    (tmp_path / "modern" / "config.json").write_text(json.dumps(conf))
    with pytest.raises(TokkitError, match="mlp_bias"):
        load_hf(ModernBertForMaskedLM, tmp_path / "modern")


def test_trains_with_the_shared_train_step():
    from tokkit.bert.ddp import make_optimizer, train_step

    torch.manual_seed(0)
    model = ModernBertForMaskedLM(ModernBertConfig(vocab_size=30, hidden_size=16, num_heads=2,
                                                   intermediate_size=16, num_layers=2, local_window=4))
    opt = make_optimizer(model, 3e-3)
    ids = torch.arange(3, 13).repeat(4, 1)  # a fixed sequence: learnable from the neighbours
    labels = torch.full_like(ids, -100)
    labels[:, 4] = ids[:, 4]
    masked = ids.clone()
    masked[:, 4] = 1
    first = train_step(model, opt, {"input_ids": masked, "labels": labels})["loss"]
    for _ in range(60):
        last = train_step(model, opt, {"input_ids": masked, "labels": labels})["loss"]
    assert last < first / 4


def test_embed_takes_a_modernbert_and_padding_changes_nothing(tmp_path):
    from helpers.bert import wordpiece_tokenizer

    from tokkit.bert import embed

    tok = wordpiece_tokenizer(tmp_path / "tok")
    torch.manual_seed(0)
    model = ModernBertForMaskedLM(ModernBertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_heads=4,
                                                   intermediate_size=24, num_layers=2, local_window=4,
                                                   pad_token_id=tok.token_to_id("[PAD]")))
    short, long = "the fox", "the quick brown fox jumps over the lazy dog and the quick cat"
    alone = embed(model, tok, [short], batch_size=1)
    together = embed(model, tok, [long, short], batch_size=2)  # short is padded to long's length here
    assert together.shape == (2, 32)
    assert abs(alone[0] - together[1]).max() < 1e-5
    assert abs(together[0] - together[1]).max() > 1e-3
