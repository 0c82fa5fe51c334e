"""The tokenizer stage: the data model (Spec), file formats, the compiled encoder and `load`.

>>> from tokkit.tokenizer import Tokenizer
>>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "a"], merges=None, special_tokens=["[UNK]"])
>>> tok.encode("a b")
[1, 0]
"""
from tokkit.tokenizer.tokenizer import Encoding as Encoding
from tokkit.tokenizer.tokenizer import Tokenizer as Tokenizer
from tokkit.tokenizer.tokenizer import check_texts as check_texts
from tokkit.tokenizer.tokenizer import load as load
