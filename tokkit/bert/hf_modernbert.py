"""Hugging Face ModernBERT folders <-> tokkit's ModernBERT (config.json and tensor names).

Used by tokkit.bert.hf, which picks this module when config.json says `"model_type": "modernbert"`
or the model is a tokkit ModernBERT.

>>> from tokkit.bert.modernbert import ModernBertConfig
>>> config_to_hf(ModernBertConfig(vocab_size=100, num_layers=4), "ModernBertForMaskedLM")["layer_types"]
['full_attention', 'sliding_attention', 'sliding_attention', 'full_attention']
"""
from __future__ import annotations

from typing import Optional

import torch

from tokkit.bert.modernbert import ModernBertConfig, ModernBertForMaskedLM, ModernBertModel
from tokkit.errors import TokkitError

_ACT = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh"}
_KIND = {"full_attention": "global", "sliding_attention": "local"}
_OPTIONAL = ("decoder.weight",)  # tied to the token embeddings; transformers omits it when saving


def _theta(d: dict, kind: str, old_key: str, default: float) -> float:
    params = (d.get("rope_parameters") or {}).get(kind) or {}
    if params.get("rope_type", "default") != "default":
        raise TokkitError(f"config.json: rope_type {params['rope_type']!r} is not supported (only 'default')")
    return float(params.get("rope_theta", d.get(old_key, default)))


def config_from_hf(d: dict) -> ModernBertConfig:
    """Translate a Hugging Face ModernBERT config.json mapping into a ModernBertConfig."""
    for key in ("attention_bias", "mlp_bias", "norm_bias"):
        if d.get(key):
            raise TokkitError(f"config.json: {key}=true is not supported (tokkit's ModernBERT has no biases there)")
    act = d.get("hidden_activation", "gelu")
    if act not in _ACT or d.get("classifier_activation", "gelu") != act:
        raise TokkitError(f"config.json: activation {act!r} is not supported (use one of {sorted(_ACT)}, "
                          "the same in the classifier head)")
    try:
        n = d["num_hidden_layers"]
        every = int(d.get("global_attn_every_n_layers", 3))
        types = d.get("layer_types")
        if types:
            kinds = [_KIND[t] for t in types]
            globals_ = [i for i, k in enumerate(kinds) if k == "global"]
            every = globals_[1] if len(globals_) > 1 else max(n, 1)
            if not globals_ or globals_[0] != 0 or kinds != ["global" if i % every == 0 else "local"
                                                             for i in range(n)]:
                raise TokkitError(f"config.json: layer_types {types} is not 'global every N layers from layer 0'")
        return ModernBertConfig(
            vocab_size=d["vocab_size"], hidden_size=d["hidden_size"], num_layers=n,
            num_heads=d["num_attention_heads"], intermediate_size=d["intermediate_size"],
            max_position_embeddings=d.get("max_position_embeddings", 8192), global_every=every,
            local_window=d.get("local_attention", 128),
            global_rope_theta=_theta(d, "full_attention", "global_rope_theta", 160_000.0),
            local_rope_theta=_theta(d, "sliding_attention", "local_rope_theta", 10_000.0),
            norm_eps=d.get("norm_eps", 1e-5), embedding_dropout=d.get("embedding_dropout", 0.0),
            attention_dropout=d.get("attention_dropout", 0.0), mlp_dropout=d.get("mlp_dropout", 0.0),
            hidden_act=_ACT[act], pad_token_id=d.get("pad_token_id") or 0,
            initializer_range=d.get("initializer_range", 0.02),
            initializer_cutoff_factor=d.get("initializer_cutoff_factor") or 2.0,
            decoder_bias=d.get("decoder_bias", True))
    except KeyError as exc:
        raise TokkitError(f"config.json: missing key {exc.args[0]!r}") from None
    except ValueError as exc:
        raise TokkitError(f"config.json: {exc}") from None


def config_to_hf(cfg: ModernBertConfig, architecture: str, specials: Optional[dict] = None) -> dict:
    """The config.json that transformers' AutoConfig reads as a ModernBERT.

    `specials` maps "[CLS]", "[SEP]" ... to ids, so the config names the tokenizer's own ids.
    """
    specials = specials or {}
    return {
        "architectures": [architecture], "model_type": "modernbert", "vocab_size": cfg.vocab_size,
        "hidden_size": cfg.hidden_size, "num_hidden_layers": cfg.num_layers,
        "num_attention_heads": cfg.num_heads, "intermediate_size": cfg.intermediate_size,
        "hidden_activation": "gelu" if cfg.hidden_act == "gelu" else "gelu_pytorch_tanh",
        "classifier_activation": "gelu" if cfg.hidden_act == "gelu" else "gelu_pytorch_tanh",
        "max_position_embeddings": cfg.max_position_embeddings,
        "layer_types": ["full_attention" if k == "global" else "sliding_attention" for k in cfg.layer_types],
        "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": cfg.global_rope_theta},
                            "sliding_attention": {"rope_type": "default", "rope_theta": cfg.local_rope_theta}},
        "local_attention": cfg.local_window, "norm_eps": cfg.norm_eps, "norm_bias": False,
        "attention_bias": False, "mlp_bias": False, "classifier_bias": False, "decoder_bias": cfg.decoder_bias,
        "embedding_dropout": cfg.embedding_dropout, "attention_dropout": cfg.attention_dropout,
        "mlp_dropout": cfg.mlp_dropout, "classifier_dropout": 0.0,
        "initializer_range": cfg.initializer_range, "initializer_cutoff_factor": cfg.initializer_cutoff_factor,
        "pad_token_id": cfg.pad_token_id, "cls_token_id": specials.get("[CLS]"),
        "sep_token_id": specials.get("[SEP]"), "bos_token_id": specials.get("[CLS]"),
        "eos_token_id": specials.get("[SEP]"), "tie_word_embeddings": True, "sparse_prediction": False,
        "classifier_pooling": "cls",
    }


def _plan(cfg: ModernBertConfig, heads: bool) -> list[tuple[str, str]]:
    """[(tokkit name, hf name)]; names relative to ModernBertModel / HF's base model."""
    plan = [("tok.weight", "embeddings.tok_embeddings.weight"), ("emb_norm.weight", "embeddings.norm.weight"),
            ("final_norm.weight", "final_norm.weight")]
    for i in range(cfg.num_layers):
        names = [("qkv", "attn.Wqkv"), ("attn_out", "attn.Wo"), ("mlp_norm", "mlp_norm"),
                 ("mlp_in", "mlp.Wi"), ("mlp_out", "mlp.Wo")] + ([("attn_norm", "attn_norm")] if i else [])
        plan += [(f"layers.{i}.{ours}.weight", f"layers.{i}.{theirs}.weight") for ours, theirs in names]
    if heads:
        plan = [("model." + ours, "model." + theirs) for ours, theirs in plan]
        plan += [("head_dense.weight", "head.dense.weight"), ("head_norm.weight", "head.norm.weight")]
        if cfg.decoder_bias:
            plan.append(("decoder_bias", "decoder.bias"))
    return plan


def load(cls: type, config: dict, state: dict[str, torch.Tensor], path, strict: bool):
    """Build `cls` (ModernBertModel or ModernBertForMaskedLM) from a config.json mapping and tensors."""
    cfg = config_from_hf(config)
    heads = cls is ModernBertForMaskedLM
    if not heads:  # a masked-LM folder read as a bare encoder: drop the `model.` prefix
        state = {k[6:] if k.startswith("model.") else k: v for k, v in state.items()}
    elif not any(k.startswith("model.") for k in state):  # a bare-encoder folder read with the head
        state = {("model." + k if not k.startswith(("head.", "decoder.")) else k): v for k, v in state.items()}
    model = cls(cfg)
    own = model.state_dict()
    missing = []
    with torch.no_grad():
        for ours, theirs in _plan(cfg, heads):
            if theirs not in state:
                missing.append(theirs)
                continue
            if state[theirs].shape != own[ours].shape:
                raise TokkitError(f"{path}: tensor {theirs} has shape {tuple(state[theirs].shape)}, "
                                  f"expected {tuple(own[ours].shape)} from config.json")
            own[ours].copy_(state[theirs])
    if missing and strict:
        raise TokkitError(f"{path}: checkpoint lacks {len(missing)} tensor(s), e.g. {', '.join(missing[:3])}")
    return model


def hf_state(model) -> tuple[dict[str, torch.Tensor], str]:
    """The model's tensors under Hugging Face names, and the matching architecture name."""
    heads = isinstance(model, ModernBertForMaskedLM)
    own = model.state_dict()
    out = {theirs: own[ours].detach().cpu().contiguous().clone() for ours, theirs in _plan(model.config, heads)}
    return out, "ModernBertForMaskedLM" if heads else "ModernBertModel"


def is_modernbert(model) -> bool:
    return isinstance(model, (ModernBertModel, ModernBertForMaskedLM))
