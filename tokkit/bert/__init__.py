"""tokkit.bert: a small PyTorch BERT that trains on tokkit's masked batches (imports torch).

>>> from tokkit.bert import BertConfig, BertForPreTraining
>>> model = BertForPreTraining(BertConfig(vocab_size=8000))
>>> sum(p.numel() for p in model.parameters()) > 1_000_000
True
"""
from tokkit.bert.model import BertConfig, BertForPreTraining, BertModel, PreTrainingOutput
from tokkit.bert.modernbert import ModernBertConfig, ModernBertForMaskedLM, ModernBertModel
from tokkit.bert.hf import save_hf

__all__ = ["BertConfig", "BertModel", "BertForPreTraining", "PreTrainingOutput", "ModernBertConfig",
           "ModernBertModel", "ModernBertForMaskedLM", "save_hf", "embed", "pretrain", "PretrainConfig"]


def __getattr__(name):
    # The training loop and embedding helper pull in the tokenizer/data modules: load them on use.
    if name == "embed":
        from tokkit.bert.embedding import embed

        return embed
    if name in ("pretrain", "PretrainConfig"):
        from tokkit.bert import train

        return getattr(train, name)
    raise AttributeError(f"module 'tokkit.bert' has no attribute {name!r}")
