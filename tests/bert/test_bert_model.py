"""tokkit.bert.model and tokkit.bert.embed on their own (no transformers, no trained vocab)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tokkit.bert import BertConfig, BertForPreTraining, BertModel, embed  # noqa: E402
from tokkit.errors import TokkitError  # noqa: E402

SMALL = dict(vocab_size=50, hidden_size=32, num_heads=4, intermediate_size=64, num_layers=2,
             max_position_embeddings=24)


def model(**kw):
    torch.manual_seed(0)
    return BertForPreTraining(BertConfig(**{**SMALL, **kw})).eval()


def test_config_defaults_and_validation():
    cfg = BertConfig(vocab_size=8000)
    assert (cfg.num_layers, cfg.hidden_size, cfg.num_heads, cfg.intermediate_size) == (4, 256, 4, 1024)
    assert (cfg.max_position_embeddings, cfg.type_vocab_size, cfg.dropout) == (512, 2, 0.1)
    with pytest.raises(ValueError, match="multiple"):
        BertConfig(hidden_size=30, num_heads=4)
    with pytest.raises(ValueError, match="hidden_act"):
        BertConfig(hidden_act="relu")
    assert BertConfig.from_dict({**cfg.to_dict(), "arch": "bert"}) == cfg
    with pytest.raises(ValueError, match="unknown model setting 'num_layer'"):  # a misspelt key never trains the default
        BertConfig.from_dict({"num_layer": 2})


def test_decoder_is_tied_to_token_embeddings():
    m = model()
    names = [n for n, _ in m.named_parameters()]
    assert not any("decoder" in n for n in names)
    ids = torch.randint(5, 50, (2, 6))
    labels = ids.clone()
    m.train()
    m(ids, labels=labels).loss.backward()
    grad = m.encoder.embeddings.tok.weight.grad
    unused = sorted(set(range(50)) - set(ids.flatten().tolist()))
    assert grad[unused].abs().sum() > 0  # only the tied decoder reaches ids absent from the input


def test_padding_does_not_change_real_positions():
    m = model()
    ids = torch.randint(5, 50, (1, 7))
    padded = torch.cat([ids, torch.zeros(1, 5, dtype=torch.long)], 1)
    mask = torch.cat([torch.ones(1, 7), torch.zeros(1, 5)], 1).long()
    with torch.no_grad():
        a = m(ids).hidden_states
        b = m(padded, attention_mask=mask).hidden_states[:, :7]
    assert torch.allclose(a, b, atol=1e-5)


def test_losses_and_labelled_logits():
    m = model()
    ids = torch.randint(5, 50, (3, 10))
    labels = torch.full_like(ids, -100)
    labels[0, 1] = 9
    labels[2, 4] = 11
    nsp = torch.tensor([0, 1, 0])
    with torch.no_grad():
        out = m(ids, labels=labels, next_sentence_label=nsp)
        full = m(ids)
    assert out.mlm_logits.shape == (2, 50) and int(out.mlm_count) == 2
    mlm = torch.nn.functional.cross_entropy(full.mlm_logits[labels != -100], torch.tensor([9, 11]))
    nspl = torch.nn.functional.cross_entropy(full.nsp_logits, nsp)
    assert torch.allclose(out.loss, mlm + nspl, atol=1e-5)
    assert torch.allclose(out.mlm_loss_sum, mlm * 2, atol=1e-5)


def test_dropout_only_in_training_and_length_limit():
    m = model()
    ids = torch.randint(5, 50, (2, 8))
    with torch.no_grad():
        assert torch.equal(m(ids).mlm_logits, m(ids).mlm_logits)
        m.train()
        assert not torch.equal(m(ids).mlm_logits, m(ids).mlm_logits)
    with pytest.raises(ValueError, match="exceeds max_position_embeddings"):
        m(torch.randint(5, 50, (1, 25)))


WORDS = [f"w{i}" for i in range(45)]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def word_tokenizer(words=WORDS):
    """A tokkit WordPiece tokenizer whose vocabulary is whole words: ids 0-4 are the specials."""
    from tokkit.tokenizer import Tokenizer

    return Tokenizer.from_trained(kind="wordpiece", vocab=SPECIALS + list(words), merges=None,
                                  special_tokens=SPECIALS)


def test_embed_mean_pools_in_input_order_independent_of_batching():
    tok = word_tokenizer()
    m = model()
    texts = ["w1 w2 w3", "w4", "w5 w6 w7 w8 w9 w10 w11", "w3 w2 w1 w0", "w40 w41"]
    vecs = embed(m, tok, texts, batch_size=2)
    assert vecs.shape == (5, 32) and vecs.dtype == np.float32
    for i, t in enumerate(texts):
        ids = torch.tensor([[2] + tok.encode(t) + [3]])
        with torch.no_grad():
            want = m.encoder(ids).mean(1)[0].numpy()
            cls = m.encoder(ids)[0, 0].numpy()
        np.testing.assert_allclose(vecs[i], want, atol=1e-5)
        np.testing.assert_allclose(embed(m, tok, [t], pooling="cls")[0], cls, atol=1e-5)
    np.testing.assert_allclose(embed(m.encoder, tok, texts, batch_size=5), vecs, atol=1e-5)
    assert not m.training and embed(m, tok, ["w1 " * 40], max_length=10).shape == (1, 32)


def test_embed_layers_and_words():
    tok = word_tokenizer()
    m = model(num_layers=4)
    text = "w1 w2 w3"
    ids = torch.tensor([[2] + tok.encode(text) + [3]])
    with torch.no_grad():
        states = m.encoder(ids, all_layers=True)  # embeddings + 4 layers
    assert len(states) == 5 and torch.equal(states[-1], m.encoder(ids))
    got = embed(m, tok, [text], layers="second_to_last")[0]
    np.testing.assert_allclose(got, states[-2][0].mean(0).numpy(), atol=1e-5)
    got = embed(m, tok, [text], layers="sum_last_four")[0]
    np.testing.assert_allclose(got, sum(states[1:])[0].mean(0).numpy(), atol=1e-5)
    words = embed(m, tok, [text, "w7"], layers="concat_last_four", pooling="words")
    assert [w.shape for w in words] == [(3, 128), (1, 128)]
    np.testing.assert_allclose(words[0][1], torch.cat(states[1:], -1)[0, 2].numpy(), atol=1e-5)  # word 1 at position 2


def test_embed_bad_input():
    tok = word_tokenizer(["a", "b"])
    with pytest.raises(TokkitError, match="vocab size"):
        embed(model(), tok, ["a b"])
    with pytest.raises(TokkitError, match="list of texts"):
        embed(model(vocab_size=7), tok, "a b")
    with pytest.raises(TokkitError, match="pooling"):
        embed(model(vocab_size=7), tok, ["a b"], pooling="max")
    with pytest.raises(TokkitError, match="layers"):
        embed(model(vocab_size=7), tok, ["a b"], layers="first")
    assert isinstance(BertModel(BertConfig(**SMALL)), torch.nn.Module)
