"""The text stage: reading corpora, BERT normalisation, GPT-2 pre-tokenisation and word counting.

The functions re-exported here show how tokkit sees text before any vocabulary applies, with
the same compiled kernels the trainers and encoders run:

>>> from tokkit.text import bert_split, split_gpt2
>>> split_gpt2("I'm here")
['I', "'m", ' here']
>>> [w for w, _ in bert_split("Héllo, World!")]
['hello', ',', 'world', '!']
"""
from tokkit.text.normalize import BertNorm as BertNorm
from tokkit.text.normalize import bert_normalize as bert_normalize
from tokkit.text.normalize import bert_split as bert_split
from tokkit.text.pretokenize import GPT2_PATTERN as GPT2_PATTERN
from tokkit.text.pretokenize import gpt2_spans as gpt2_spans
from tokkit.text.pretokenize import split_gpt2 as split_gpt2
