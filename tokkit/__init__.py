"""tokkit: train tokenizers, encode BERT inputs, mask them, and feed a small BERT.

>>> import tokkit
>>> tok = tokkit.train(texts=["low lower lowest"] * 10, algo="wordpiece", vocab_size=60)
>>> tok.decode(tok.encode("lower"))
'lower'
"""
from tokkit.engine import COMPILED, engine_name
from tokkit.errors import TokkitError

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


def __getattr__(name):
    # Public names are imported on first use so `import tokkit` stays cheap and never pulls in
    # optional dependencies (torch is only ever imported by tokkit.bert); the first lookup caches
    # the name in this module, so later calls cost nothing extra.
    value = _resolve(name)
    globals()[name] = value
    return value


def _resolve(name):
    if name == "train":
        from tokkit.trainers import train

        return train
    if name in ("load", "Tokenizer"):
        from tokkit import tokenizer

        return getattr(tokenizer, name)
    if name == "encode":
        from tokkit.inputs import encode

        return encode
    if name == "mask_tokens":
        from tokkit.masking import mask_tokens

        return mask_tokens
    raise AttributeError(f"module 'tokkit' has no attribute {name!r}")
