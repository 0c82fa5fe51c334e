"""tokkit.bert: a small PyTorch BERT that trains on tokkit's masked batches (imports torch).

>>> from tokkit.bert import BertConfig, BertForPreTraining
>>> model = BertForPreTraining(BertConfig(vocab_size=8000))
>>> sum(p.numel() for p in model.parameters()) > 1_000_000
True
"""
from tokkit.bert.embedding import embed as embed
from tokkit.bert.export import export_run as export_run
from tokkit.bert.finetune_run import FinetuneConfig as FinetuneConfig
from tokkit.bert.finetune_run import finetune as finetune
from tokkit.bert.heads import HeadConfig as HeadConfig
from tokkit.bert.heads import TaskModel as TaskModel
from tokkit.bert.heads import TaskOutput as TaskOutput
from tokkit.bert.hf import load_hf as load_hf
from tokkit.bert.hf import save_hf as save_hf
from tokkit.bert.model import BertConfig as BertConfig
from tokkit.bert.model import BertForPreTraining as BertForPreTraining
from tokkit.bert.model import BertModel as BertModel
from tokkit.bert.model import PreTrainingOutput as PreTrainingOutput
from tokkit.bert.modernbert import ModernBertConfig as ModernBertConfig
from tokkit.bert.modernbert import ModernBertForMaskedLM as ModernBertForMaskedLM
from tokkit.bert.modernbert import ModernBertModel as ModernBertModel
from tokkit.bert.predict import evaluate_file as evaluate_file
from tokkit.bert.predict import load_finetuned as load_finetuned
from tokkit.bert.predict import predict_rows as predict_rows
from tokkit.bert.train import PretrainConfig as PretrainConfig
from tokkit.bert.train import pretrain as pretrain

__all__ = ["BertConfig", "BertModel", "BertForPreTraining", "PreTrainingOutput", "ModernBertConfig",
           "ModernBertModel", "ModernBertForMaskedLM", "HeadConfig", "TaskModel", "TaskOutput", "load_hf", "save_hf",
           "embed", "pretrain", "PretrainConfig", "export_run", "finetune", "FinetuneConfig", "load_finetuned",
           "evaluate_file", "predict_rows"]
