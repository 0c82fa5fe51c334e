"""The pretraining stage: documents, NSP and full-sentence examples, datasets, shards and the collator.

Importing it never imports torch; `as_torch_dataset()` wraps a dataset for a DataLoader.
"""
from tokkit.pretraining.collate import MaskingCollator as MaskingCollator
from tokkit.pretraining.corpus_index import DocumentIndex as DocumentIndex
from tokkit.pretraining.dataset import KINDS as KINDS
from tokkit.pretraining.dataset import PretrainingDataset as PretrainingDataset
from tokkit.pretraining.dataset import iter_examples as iter_examples
from tokkit.pretraining.dataset import iter_shuffled_examples as iter_shuffled_examples
from tokkit.pretraining.dataset import labelled_lengths as labelled_lengths
from tokkit.pretraining.dataset import worker_share as worker_share
from tokkit.pretraining.documents import iter_documents as iter_documents
from tokkit.pretraining.shards import ShardDataset as ShardDataset
from tokkit.pretraining.shards import is_shard_dir as is_shard_dir
from tokkit.pretraining.shards import write_shards as write_shards
