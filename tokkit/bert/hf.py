"""Read and write Hugging Face BERT folders (config.json + model.safetensors / pytorch_model.bin).

>>> from tokkit.bert import BertForPreTraining, save_hf   # doctest: +SKIP
>>> model = load_hf(BertForPreTraining, "bert-folder")     # doctest: +SKIP
>>> save_hf(model, tokenizer, "exported")                 # doctest: +SKIP
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import torch

from tokkit._files import atomic_dir
from tokkit.bert import hf_modernbert
from tokkit.bert.model import BertConfig, BertForPreTraining, BertModel
from tokkit.bert.modernbert import ModernBertForMaskedLM, ModernBertModel
from tokkit.errors import TokkitError

# tokkit name (relative to BertModel) -> Hugging Face name (relative to `bert.`), per layer `{i}`.
_BASE = {
    "embeddings.tok.weight": "embeddings.word_embeddings.weight",
    "embeddings.pos.weight": "embeddings.position_embeddings.weight",
    "embeddings.seg.weight": "embeddings.token_type_embeddings.weight",
    "embeddings.ln.weight": "embeddings.LayerNorm.weight",
    "embeddings.ln.bias": "embeddings.LayerNorm.bias",
    "pooler.weight": "pooler.dense.weight",
    "pooler.bias": "pooler.dense.bias",
}
_LAYER = {
    "attn_out.{p}": "attention.output.dense.{p}",
    "ln1.{p}": "attention.output.LayerNorm.{p}",
    "ffn_in.{p}": "intermediate.dense.{p}",
    "ffn_out.{p}": "output.dense.{p}",
    "ln2.{p}": "output.LayerNorm.{p}",
}
_QKV = ("query", "key", "value")  # tokkit fuses these three into layers.{i}.qkv
_HEADS = {
    "mlm_dense.{p}": "cls.predictions.transform.dense.{p}",
    "mlm_ln.{p}": "cls.predictions.transform.LayerNorm.{p}",
    "nsp.{p}": "cls.seq_relationship.{p}",
}
_ACT = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh"}
_OPTIONAL = ("position_ids", "token_type_ids", "cls.predictions.decoder.weight")  # legitimately absent
TOKENIZER_FILES = {"tokenizer.json", "vocab.txt", "vocab.json", "merges.txt", "tokenizer_config.json",
                   "special_tokens_map.json"}


def config_from_hf(d: dict) -> BertConfig:
    """Translate a Hugging Face BERT config.json mapping into a BertConfig."""
    act = d.get("hidden_act", "gelu")
    if act not in _ACT:
        raise TokkitError(f"config.json: hidden_act {act!r} is not supported (use one of {sorted(_ACT)})")
    try:
        return BertConfig(
            vocab_size=d["vocab_size"], hidden_size=d["hidden_size"], num_layers=d["num_hidden_layers"],
            num_heads=d["num_attention_heads"], intermediate_size=d["intermediate_size"],
            max_position_embeddings=d.get("max_position_embeddings", 512),
            type_vocab_size=d.get("type_vocab_size", 2), dropout=d.get("hidden_dropout_prob", 0.1),
            attention_dropout=d.get("attention_probs_dropout_prob", 0.1),
            layer_norm_eps=d.get("layer_norm_eps", 1e-12), hidden_act=_ACT[act],
            pad_token_id=d.get("pad_token_id") or 0, initializer_range=d.get("initializer_range", 0.02))
    except KeyError as exc:
        raise TokkitError(f"config.json: missing key {exc.args[0]!r}") from None
    except ValueError as exc:
        raise TokkitError(f"config.json: {exc}") from None


def config_to_hf(cfg: BertConfig, architecture: str) -> dict:
    """The config.json that transformers' AutoConfig reads as a BERT."""
    return {
        "architectures": [architecture], "model_type": "bert", "vocab_size": cfg.vocab_size,
        "hidden_size": cfg.hidden_size, "num_hidden_layers": cfg.num_layers,
        "num_attention_heads": cfg.num_heads, "intermediate_size": cfg.intermediate_size,
        "hidden_act": "gelu" if cfg.hidden_act == "gelu" else "gelu_pytorch_tanh",
        "hidden_dropout_prob": cfg.dropout, "attention_probs_dropout_prob": cfg.attention_dropout,
        "max_position_embeddings": cfg.max_position_embeddings, "type_vocab_size": cfg.type_vocab_size,
        "initializer_range": cfg.initializer_range, "layer_norm_eps": cfg.layer_norm_eps,
        "pad_token_id": cfg.pad_token_id, "position_embedding_type": "absolute",
        "tie_word_embeddings": True, "use_cache": True, "classifier_dropout": None,
    }


def read_hf_state(path: Path) -> dict[str, torch.Tensor]:
    """All tensors of a folder: model.safetensors (possibly sharded) or pytorch_model.bin."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    files: list[Path]
    if (path / "model.safetensors").is_file():
        files = [path / "model.safetensors"]
    elif (path / "model.safetensors.index.json").is_file():
        index = json.loads((path / "model.safetensors.index.json").read_text())
        files = [path / f for f in sorted(set(index["weight_map"].values()))]
    elif (path / "pytorch_model.bin").is_file():
        try:  # the one pickle-based format accepted, and only without running code
            return torch.load(path / "pytorch_model.bin", map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - any failure here means a corrupt file
            raise TokkitError(f"{path / 'pytorch_model.bin'}: cannot read checkpoint ({exc})") from None
    else:
        raise TokkitError(f"{path}: no model.safetensors or pytorch_model.bin")
    state: dict[str, torch.Tensor] = {}
    for f in files:
        try:
            state.update(load_file(str(f)))
        except (SafetensorError, OSError, ValueError) as exc:
            raise TokkitError(f"{f}: corrupt checkpoint ({exc})") from None
    return state


def _normalise(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    # Old TF-converted checkpoints spell LayerNorm parameters gamma/beta; BertModel checkpoints lack `bert.`.
    out = {}
    for k, v in state.items():
        k = k.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        out[k[5:] if k.startswith("bert.") else k] = v
    return out


def _plan(cfg: BertConfig, heads: bool) -> list[tuple[str, list[str]]]:
    """[(tokkit name, [hf names whose concatenation along dim 0 gives it])]."""
    plan = [(ours, [theirs]) for ours, theirs in _BASE.items()]
    for i in range(cfg.num_layers):
        for p in ("weight", "bias"):
            plan.append((f"layers.{i}.qkv.{p}",
                         [f"encoder.layer.{i}.attention.self.{n}.{p}" for n in _QKV]))
            for ours, theirs in _LAYER.items():
                plan.append((f"layers.{i}.{ours.format(p=p)}", [f"encoder.layer.{i}.{theirs.format(p=p)}"]))
    if heads:
        plan = [("bert." + ours, theirs) for ours, theirs in plan]
        for p in ("weight", "bias"):
            plan += [(ours.format(p=p), [theirs.format(p=p)]) for ours, theirs in _HEADS.items()]
        plan.append(("mlm_bias", ["cls.predictions.bias"]))
    return plan


def _wants_modernbert(cls: type, raw: dict) -> bool:
    modern = cls in (ModernBertModel, ModernBertForMaskedLM)
    if modern != (raw.get("model_type") == "modernbert"):
        raise TokkitError(f"config.json describes a {raw.get('model_type')!r} model, not one {cls.__name__} reads")
    return modern


def load_hf(cls: type, path, *, strict: bool = True):
    """Build `cls` (BertModel, BertForPreTraining or their ModernBERT twins) from a Hugging Face folder.

    A missing or mis-shaped tensor raises TokkitError naming it; with strict=False missing ones keep
    their random initialisation instead.
    """
    path = Path(path)
    if not (path / "config.json").is_file():
        raise TokkitError(f"{path}: no config.json (not a Hugging Face model folder)")
    try:
        raw = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TokkitError(f"{path / 'config.json'}: invalid JSON ({exc})") from None
    if _wants_modernbert(cls, raw):
        return hf_modernbert.load(cls, raw, read_hf_state(path), path, strict)
    cfg = config_from_hf(raw)
    state = _normalise(read_hf_state(path))
    if "cls.predictions.bias" not in state and "cls.predictions.decoder.bias" in state:
        state["cls.predictions.bias"] = state["cls.predictions.decoder.bias"]
    model = cls(cfg)
    own = model.state_dict()
    heads = cls is BertForPreTraining
    missing = []
    with torch.no_grad():
        for ours, theirs in _plan(cfg, heads):
            absent = [t for t in theirs if t not in state]
            if absent:
                missing += absent
                continue
            tensor = torch.cat([state[t] for t in theirs]) if len(theirs) > 1 else state[theirs[0]]
            if tensor.shape != own[ours].shape:
                raise TokkitError(f"{path}: tensor {'+'.join(theirs)} has shape {tuple(tensor.shape)}, "
                                  f"expected {tuple(own[ours].shape)} from config.json")
            own[ours].copy_(tensor)
    if missing and strict:
        raise TokkitError(f"{path}: checkpoint lacks {len(missing)} tensor(s), e.g. {', '.join(missing[:3])}")
    return model


def hf_state(model) -> tuple[dict[str, torch.Tensor], str]:
    """The model's tensors under Hugging Face names, and the matching architecture name."""
    if hf_modernbert.is_modernbert(model):
        return hf_modernbert.hf_state(model)
    heads = isinstance(model, BertForPreTraining)
    if not heads and not isinstance(model, BertModel):
        raise TokkitError(f"save_hf expects a tokkit BertModel or BertForPreTraining, not {type(model).__name__}")
    own = model.state_dict()
    C = model.config.hidden_size
    out = {}
    for ours, theirs in _plan(model.config, heads):
        t = own[ours].detach().cpu()
        prefix = "bert." if heads and not theirs[0].startswith("cls.") else ""
        parts = t.split(C) if len(theirs) > 1 else [t]
        for name, part in zip(theirs, parts):
            out[prefix + name] = part.contiguous().clone()
    return out, "BertForPreTraining" if heads else "BertModel"


def _special_ids(tokenizer) -> dict:
    if tokenizer is None:
        return {}
    ids = {name: tokenizer.token_to_id(name) for name in ("[CLS]", "[SEP]")}
    return {k: v for k, v in ids.items() if v is not None}


def save_hf(model, tokenizer, directory, *, force: bool = False) -> Path:
    """Write `model` (and `tokenizer`, if given) as a folder transformers' Auto* classes load.

    The tied decoder weight is omitted, as transformers itself does; it re-ties it on load.
    """
    from safetensors.torch import save_file

    state, arch = hf_state(model)
    markers = {"config.json", "model.safetensors"} | TOKENIZER_FILES
    with atomic_dir(directory, marker_files=markers, force=force) as tmp:
        save_file(state, os.path.join(tmp, "model.safetensors"), metadata={"format": "pt"})
        if arch.startswith("ModernBert"):
            cfg = hf_modernbert.config_to_hf(model.config, arch, _special_ids(tokenizer))
        else:
            cfg = config_to_hf(model.config, arch)
        if tokenizer is not None:
            tokenizer.save(tmp)
            if arch.startswith("ModernBert"):
                _without_token_types(Path(tmp) / "tokenizer_config.json")
        with open(os.path.join(tmp, "config.json"), "w", encoding="utf-8") as f:
            json.dump(cfg, f, indent=2, sort_keys=True)
    return Path(directory)


def _without_token_types(path: Path) -> None:
    """ModernBERT takes no token_type_ids: the tokenizer must not hand them to it (a fill-mask
    pipeline passes every tokenizer output to the model)."""
    if not path.is_file():
        return
    config = json.loads(path.read_text(encoding="utf-8"))
    config["model_input_names"] = ["input_ids", "attention_mask"]
    path.write_text(json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

