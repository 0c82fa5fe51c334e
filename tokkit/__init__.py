"""tokkit: train tokenizers, encode BERT inputs, mask them, and feed a small BERT.

>>> import tokkit
>>> tok = tokkit.train(texts=["low lower lowest"] * 10, algo="wordpiece", vocab_size=60)
>>> tok.decode(tok.encode("lower"))
'lower'

The public names below need neither torch nor dask; `tokkit.bert` and the Dask paths import them
when used.
"""
from tokkit.errors import TokkitError as TokkitError
from tokkit.inputs import encode as encode
from tokkit.inputs import mask_tokens as mask_tokens
from tokkit.tokenizer import Tokenizer as Tokenizer
from tokkit.tokenizer import load as load
from tokkit.train import train as train
from tokkit.train.engine import COMPILED as COMPILED
from tokkit.train.engine import engine_name as engine_name

__version__ = "0.1.0"

__all__ = [
    "COMPILED",
    "TokkitError",
    "engine_name",
    "train",
    "load",
    "Tokenizer",
    "encode",
    "mask_tokens",
]
