"""Hugging Face tensor and class names of tokkit's models, as data keyed by architecture and part.

A tokkit name is a template: `{i}` stands for a layer number and `{p}` for "weight" or "bias". Each
part of a model (the encoder, a head) maps its tokkit names to transformers' names; an encoder
name sits under the model's `encoder.` in tokkit and under BASE_PREFIX in transformers (`bert.`,
`model.`). BERT fuses the query, key and value projections into one tensor that transformers keeps
as three, so that row lists three names, concatenated along dim 0.

>>> [name.split(".")[-2] for name in rename("bert", "encoder", "layers.3.qkv.bias")]
['query', 'key', 'value']
>>> rename("modernbert", "classify", "head.transform.dense.weight")
['head.dense.weight']
>>> ARCHITECTURES["modernbert", "qa"]
'ModernBertForQuestionAnswering'
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

from tokkit.bert.tasks import TASKS

BASE_PREFIX = {"bert": "bert.", "modernbert": "model."}

_BERT_ENCODER = {
    "embeddings.tok.weight": "embeddings.word_embeddings.weight",
    "embeddings.pos.weight": "embeddings.position_embeddings.weight",
    "embeddings.seg.weight": "embeddings.token_type_embeddings.weight",
    "embeddings.ln.{p}": "embeddings.LayerNorm.{p}",
    "pooler.{p}": "pooler.dense.{p}",
    "layers.{i}.qkv.{p}": ("encoder.layer.{i}.attention.self.query.{p}", "encoder.layer.{i}.attention.self.key.{p}",
                           "encoder.layer.{i}.attention.self.value.{p}"),
    "layers.{i}.attn_out.{p}": "encoder.layer.{i}.attention.output.dense.{p}",
    "layers.{i}.ln1.{p}": "encoder.layer.{i}.attention.output.LayerNorm.{p}",
    "layers.{i}.ffn_in.{p}": "encoder.layer.{i}.intermediate.dense.{p}",
    "layers.{i}.ffn_out.{p}": "encoder.layer.{i}.output.dense.{p}",
    "layers.{i}.ln2.{p}": "encoder.layer.{i}.output.LayerNorm.{p}",
}
_MODERNBERT_ENCODER = {
    "tok.weight": "embeddings.tok_embeddings.weight",
    "emb_norm.weight": "embeddings.norm.weight",
    "final_norm.weight": "final_norm.weight",
    "layers.{i}.attn_norm.weight": "layers.{i}.attn_norm.weight",  # absent from layer 0 in both
    "layers.{i}.qkv.weight": "layers.{i}.attn.Wqkv.weight",
    "layers.{i}.attn_out.weight": "layers.{i}.attn.Wo.weight",
    "layers.{i}.mlp_norm.weight": "layers.{i}.mlp_norm.weight",
    "layers.{i}.mlp_in.weight": "layers.{i}.mlp.Wi.weight",
    "layers.{i}.mlp_out.weight": "layers.{i}.mlp.Wo.weight",
}
_MODERNBERT_HEAD = {"head.transform.dense.weight": "head.dense.weight",
                    "head.transform.norm.weight": "head.norm.weight", "head.classifier.{p}": "classifier.{p}"}

# (architecture, part) -> {tokkit name: transformers name(s)}; head names are the model's own.
NAMES = {
    ("bert", "encoder"): _BERT_ENCODER,
    ("bert", "mlm"): {"mlm.transform.dense.{p}": "cls.predictions.transform.dense.{p}",
                      "mlm.transform.norm.{p}": "cls.predictions.transform.LayerNorm.{p}",
                      "mlm.bias": "cls.predictions.bias"},
    ("bert", "nsp"): {"nsp.{p}": "cls.seq_relationship.{p}"},
    **{("bert", t.name): {"head.classifier.{p}": t.bert_linear + ".{p}"} for t in TASKS.values()},
    ("modernbert", "encoder"): _MODERNBERT_ENCODER,
    ("modernbert", "mlm"): {"mlm.transform.dense.weight": "head.dense.weight",
                            "mlm.transform.norm.weight": "head.norm.weight", "mlm.bias": "decoder.bias"},
    **{("modernbert", name): _MODERNBERT_HEAD for name in TASKS},
}

# (architecture, the model's heads) -> transformers' class; () is the bare encoder, a task its fine-tuned model.
ARCHITECTURES = {
    ("bert", ()): "BertModel",
    ("bert", ("mlm", "nsp")): "BertForPreTraining",
    ("modernbert", ()): "ModernBertModel",
    ("modernbert", ("mlm",)): "ModernBertForMaskedLM",
    **{(arch, t.name): t.architecture(arch) for arch in BASE_PREFIX for t in TASKS.values()},
}

# transformers builds BERT's token and span models without a pooler: a folder of theirs lacks it.
UNPOOLED_TASKS = tuple(t.name for t in TASKS.values() if not t.sentence)


@lru_cache(maxsize=None)
def _patterns(arch: str, part: str) -> tuple:
    out = []
    for ours, theirs in NAMES[arch, part].items():
        regex = re.escape(ours).replace(r"\{i\}", r"(?P<i>\d+)").replace(r"\{p\}", r"(?P<p>weight|bias)")
        out.append((re.compile(regex + "$"), (theirs,) if isinstance(theirs, str) else theirs))
    return tuple(out)


def rename(arch: str, part: str, name: str) -> Optional[list[str]]:
    """transformers' name(s) for tokkit's `name` within `part`, or None when the part has no such name."""
    for regex, theirs in _patterns(arch, part):
        m = regex.match(name)
        if m:
            return [t.format(**m.groupdict()) for t in theirs]
    return None
