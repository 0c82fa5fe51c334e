"""config.json <-> tokkit's model and head configs, for both architectures.

>>> from tokkit.bert.modernbert import ModernBertConfig
>>> d = config_to_hf(ModernBertConfig(vocab_size=100), "ModernBertForSequenceClassification",
...                  head=HeadConfig("classify", labels=("neg", "pos"), pooling="mean"))
>>> d["model_type"], d["id2label"], d["classifier_pooling"]
('modernbert', {'0': 'neg', '1': 'pos'}, 'mean')
>>> head_from_hf(d, "classify").labels
('neg', 'pos')
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Optional, Union

from tokkit._shape import MAX_LAYERS, MAX_WIDTH, whole
from tokkit._files import read_json
from tokkit.bert.heads import HeadConfig
from tokkit.bert.tasks import TASKS
from tokkit.bert.model import BertConfig
from tokkit.bert.modernbert import ModernBertConfig
from tokkit.errors import TokkitError

_ACT = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh"}
_KIND = {"full_attention": "global", "sliding_attention": "local"}


# The type and range of every config.json field tokkit reads, checked when the file is read, so
# that no later step meets a string for a width, a zero head count or a list where an object goes.
# kind: "whole" (low, high), "share" ([0, 1)), "positive" (finite > 0), "non-negative", "str",
# "bool", "object", "strings" (a list of str). NULLABLE fields may also be null.
_FIELDS = {
    "vocab_size": ("whole", 1, MAX_WIDTH), "hidden_size": ("whole", 1, MAX_WIDTH),
    "num_hidden_layers": ("whole", 1, MAX_LAYERS), "num_attention_heads": ("whole", 1, MAX_WIDTH),
    "intermediate_size": ("whole", 1, MAX_WIDTH), "max_position_embeddings": ("whole", 1, MAX_WIDTH),
    "type_vocab_size": ("whole", 1, MAX_WIDTH), "pad_token_id": ("whole", 0, MAX_WIDTH),
    "global_attn_every_n_layers": ("whole", 1, MAX_LAYERS), "local_attention": ("whole", 2, MAX_WIDTH),
    "hidden_dropout_prob": ("share",), "attention_probs_dropout_prob": ("share",), "embedding_dropout": ("share",),
    "attention_dropout": ("share",), "mlp_dropout": ("share",), "classifier_dropout": ("share",),
    "layer_norm_eps": ("positive",), "norm_eps": ("positive",), "initializer_range": ("non-negative",),
    "initializer_cutoff_factor": ("positive",), "global_rope_theta": ("positive",), "local_rope_theta": ("positive",),
    "hidden_act": ("str",), "hidden_activation": ("str",), "classifier_activation": ("str",), "model_type": ("str",),
    "problem_type": ("str",), "classifier_pooling": ("str",), "architectures": ("strings",),
    "layer_types": ("strings",), "id2label": ("object",), "label2id": ("object",), "rope_parameters": ("object",),
    "tokkit": ("object",), "attention_bias": ("bool",), "mlp_bias": ("bool",), "norm_bias": ("bool",),
    "decoder_bias": ("bool",),
}
_NULLABLE = {"pad_token_id", "classifier_dropout", "problem_type", "initializer_cutoff_factor", "layer_types",
             "rope_parameters", "id2label", "label2id", "architectures", "tokkit"}
# config.json's "tokkit": how a fine-tuned model's inputs and outputs are read back.
SETTINGS = {"task": ("str",), "max_length": ("whole", 2, MAX_WIDTH), "stride": ("whole", 0, MAX_WIDTH),
            "n_best": ("whole", 1, MAX_WIDTH), "max_answer_length": ("whole", 1, MAX_WIDTH),
            "label_all_subtokens": ("bool",)}


def read_config(folder) -> dict:
    """A model folder's config.json, every field tokkit reads checked: the one reader every command uses.

    Unreadable or invalid JSON, invalid UTF-8, a value that is not an object, and a field of the
    wrong type or out of range are each one TokkitError naming the file and the field.
    """
    path = Path(folder) / "config.json"
    if not path.is_file():
        raise TokkitError(f"{folder}: no config.json (not a Hugging Face model folder)")
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise TokkitError(f"{path}: not a JSON object")
    check_fields(raw, _FIELDS, str(path), nullable=_NULLABLE)
    if raw.get("tokkit") is not None:
        check_fields(raw["tokkit"], SETTINGS, f"{path}: field 'tokkit'")
        if raw["tokkit"].get("task", "classify") not in TASKS:
            raise TokkitError(f"{path}: field 'tokkit.task' must be one of {list(TASKS)}, got {raw['tokkit']['task']!r}")
        length, positions = raw["tokkit"].get("max_length"), raw.get("max_position_embeddings", 512)
        if length is not None and whole(positions) and length > positions:
            raise TokkitError(f"{path}: field 'tokkit.max_length' {length} exceeds the model's {positions} positions "
                              "(max_position_embeddings)")
    for kind, params in (raw.get("rope_parameters") or {}).items():
        if not isinstance(params, dict):
            raise TokkitError(f"{path}: field 'rope_parameters.{kind}' must be an object, got {params!r}")
        check_fields(params, {"rope_theta": ("positive",), "rope_type": ("str",)}, f"{path}: field 'rope_parameters.{kind}'")
    if raw.get("model_type", "bert") in ("bert", "modernbert"):  # another type is for the caller to judge
        config_from_hf(raw, str(path))  # the shape as a whole: heads dividing the width, the parameter count
    return raw


def check_fields(d: dict, rules: dict, where: str, *, nullable=()) -> None:
    """Each field of `d` that `rules` names has its kind and range (see _FIELDS), or a TokkitError naming it."""
    for key, (kind, *bounds) in rules.items():
        if key not in d or (d[key] is None and key in nullable):
            continue
        value = d[key]
        if kind == "whole":
            ok, want = whole(value) and bounds[0] <= value <= bounds[1], f"a whole number in [{bounds[0]}, {bounds[1]}]"
        elif kind in ("share", "positive", "non-negative"):
            real = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            ok = real and (0 <= value < 1 if kind == "share" else value > 0 if kind == "positive" else value >= 0)
            want = {"share": "a number in [0, 1)", "positive": "a finite number > 0",
                    "non-negative": "a finite number >= 0"}[kind]
        elif kind == "strings":
            ok, want = isinstance(value, list) and all(isinstance(v, str) for v in value), "a list of strings"
        else:
            types = {"str": str, "bool": bool, "object": dict}
            ok, want = isinstance(value, types[kind]), {"str": "a string", "bool": "true or false",
                                                        "object": "a JSON object"}[kind]
        if not ok:
            shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
            raise TokkitError(f"{where}: field {key!r} must be {want}, got {shown}")


def arch_of_hf(d: dict, where: str = "config.json") -> str:
    """"modernbert" or "bert" for a config.json mapping; another model type is refused."""
    kind = d.get("model_type", "bert")
    if kind not in ("bert", "modernbert"):
        raise TokkitError(f"{where} describes a {kind!r} model; tokkit reads 'bert' and 'modernbert' models")
    return kind


def config_from_hf(d: dict, where: str = "config.json") -> Union[BertConfig, ModernBertConfig]:
    """The encoder config of a config.json mapping (BERT or ModernBERT, by its model_type)."""
    return _modernbert_from_hf(d, where) if arch_of_hf(d, where) == "modernbert" else _bert_from_hf(d, where)


def config_to_hf(cfg, architecture: str, specials: Optional[dict] = None, head: Optional[HeadConfig] = None) -> dict:
    """The config.json that transformers' AutoConfig reads, with the head's labels and settings.

    `specials` maps "[CLS]", "[SEP]" ... to ids, so a ModernBERT config names the tokenizer's own ids.
    """
    if isinstance(cfg, ModernBertConfig):
        out = _modernbert_to_hf(cfg, architecture, specials)
    else:
        out = _bert_to_hf(cfg, architecture)
    return {**out, **(_head_to_hf(head, isinstance(cfg, ModernBertConfig)) if head is not None else {})}


def _head_to_hf(head: HeadConfig, modern: bool) -> dict:
    labels = head.kind.hf_labels(head)
    out = {"id2label": {str(i): name for i, name in enumerate(labels)},
           "label2id": {name: i for i, name in enumerate(labels)},
           "classifier_dropout": head.dropout if head.dropout is not None or not modern else 0.0}
    if head.kind.problem_type is not None:
        out["problem_type"] = head.kind.problem_type
    if modern:
        out["classifier_pooling"] = head.pooling
    return out


def head_from_hf(d: dict, task: str, where: str = "config.json") -> HeadConfig:
    """The head config.json describes for `task`: its labels (id2label in id order), pooling and dropout."""
    try:
        id2label = {int(k): str(v) for k, v in (d.get("id2label") or {}).items()}
    except (TypeError, ValueError):
        raise TokkitError(f"{where}: id2label keys must be whole numbers") from None
    if sorted(id2label) != list(range(len(id2label))):
        raise TokkitError(f"{where}: id2label must number its labels 0..n-1, got {sorted(id2label)}")
    kind = TASKS[task].from_folder(d, len(id2label)) if task in TASKS else None
    task = kind.name if kind is not None else task
    labels = tuple(id2label[i] for i in range(len(id2label))) if kind is not None and kind.has_labels else ()
    dropout = d.get("classifier_dropout")
    try:
        return HeadConfig(task, labels=labels, pooling=d.get("classifier_pooling", "cls"),
                          dropout=float(dropout) if dropout is not None else None)
    except (TypeError, ValueError) as exc:
        raise TokkitError(f"{where}: the {task} head is not one tokkit builds ({exc})") from None


def _bert_from_hf(d: dict, where: str) -> BertConfig:
    """Translate a Hugging Face BERT config.json mapping into a BertConfig."""
    act = d.get("hidden_act", "gelu")
    if act not in _ACT:
        raise TokkitError(f"{where}: hidden_act {act!r} is not supported (use one of {sorted(_ACT)})")
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
        raise TokkitError(f"{where}: missing key {exc.args[0]!r}") from None
    except TokkitError:
        raise
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise TokkitError(f"{where}: {exc}") from None


def _bert_to_hf(cfg: BertConfig, architecture: str) -> dict:
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


def _theta(d: dict, kind: str, old_key: str, default: float, where: str = "config.json") -> float:
    params = (d.get("rope_parameters") or {}).get(kind) or {}
    if params.get("rope_type", "default") != "default":
        raise TokkitError(f"{where}: rope_type {params['rope_type']!r} is not supported (only 'default')")
    return float(params.get("rope_theta", d.get(old_key, default)))


def _modernbert_from_hf(d: dict, where: str) -> ModernBertConfig:
    """Translate a Hugging Face ModernBERT config.json mapping into a ModernBertConfig."""
    for key in ("attention_bias", "mlp_bias", "norm_bias"):
        if d.get(key):
            raise TokkitError(f"{where}: {key}=true is not supported (tokkit's ModernBERT has no biases there)")
    act = d.get("hidden_activation", "gelu")
    if act not in _ACT or d.get("classifier_activation", "gelu") != act:
        raise TokkitError(f"{where}: activation {act!r} is not supported (use one of {sorted(_ACT)}, "
                          "the same in the classifier head)")
    try:
        n = d["num_hidden_layers"]
        every = int(d.get("global_attn_every_n_layers", 3))
        types = d.get("layer_types")
        if types:
            if len(types) != n or not set(types) <= set(_KIND):
                raise TokkitError(f"{where}: layer_types {types} must name {n} layers, each one of {sorted(_KIND)}")
            kinds = [_KIND[t] for t in types]
            globals_ = [i for i, k in enumerate(kinds) if k == "global"]
            every = globals_[1] if len(globals_) > 1 else max(n, 1)
            if not globals_ or globals_[0] != 0 or kinds != ["global" if i % every == 0 else "local"
                                                             for i in range(n)]:
                raise TokkitError(f"{where}: layer_types {types} is not 'global every N layers from layer 0'")
        return ModernBertConfig(
            vocab_size=d["vocab_size"], hidden_size=d["hidden_size"], num_layers=n,
            num_heads=d["num_attention_heads"], intermediate_size=d["intermediate_size"],
            max_position_embeddings=d.get("max_position_embeddings", 8192), global_every=every,
            local_window=d.get("local_attention", 128),
            global_rope_theta=_theta(d, "full_attention", "global_rope_theta", 160_000.0, where),
            local_rope_theta=_theta(d, "sliding_attention", "local_rope_theta", 10_000.0, where),
            norm_eps=d.get("norm_eps", 1e-5), embedding_dropout=d.get("embedding_dropout", 0.0),
            attention_dropout=d.get("attention_dropout", 0.0), mlp_dropout=d.get("mlp_dropout", 0.0),
            hidden_act=_ACT[act], pad_token_id=d.get("pad_token_id") or 0,
            initializer_range=d.get("initializer_range", 0.02),
            initializer_cutoff_factor=d.get("initializer_cutoff_factor") or 2.0,
            decoder_bias=d.get("decoder_bias", True))
    except KeyError as exc:
        raise TokkitError(f"{where}: missing key {exc.args[0]!r}") from None
    except TokkitError:
        raise
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise TokkitError(f"{where}: {exc}") from None


def _modernbert_to_hf(cfg: ModernBertConfig, architecture: str, specials: Optional[dict] = None) -> dict:
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


