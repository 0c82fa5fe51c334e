"""The model of a tokenizer.json: BPE, Unigram, WordPiece or WordLevel, read and written as tokenizers does.

Each model is a frozen dataclass whose fields are its JSON keys, with a plain-Python `tokenize(piece)`
giving [(id, start, end)] (offsets in characters of the piece) exactly as tokenizers' model does.

>>> m = model_from_json({"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
...                      "max_input_chars_per_word": 100, "vocab": {"[UNK]": 0, "hug": 1, "##s": 2}}, "t.json")
>>> m.tokenize("hugs")
[(1, 0, 3), (2, 3, 4)]
>>> model_to_json(m)["vocab"]
{'[UNK]': 0, 'hug': 1, '##s': 2}
"""
from __future__ import annotations

from typing import Union

from tokkit.errors import TokkitError
from tokkit.tokenizer.models.bpe import BPE as BPE
from tokkit.tokenizer.models.unigram import Unigram as Unigram
from tokkit.tokenizer.models.wordlevel import WordLevel as WordLevel
from tokkit.tokenizer.models.wordlevel import json_object
from tokkit.tokenizer.models.wordpiece import WordPiece as WordPiece

Model = Union[BPE, Unigram, WordPiece, WordLevel]
MODELS = {"BPE": BPE, "Unigram": Unigram, "WordPiece": WordPiece, "WordLevel": WordLevel}
_WORDPIECE_KEYS = ("unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab")


def model_from_json(obj: dict, where: str) -> Model:
    """The model a tokenizer.json `model` object describes (one TokkitError when tokkit cannot use it)."""
    json_object(obj, f"{where}: model")
    kind = obj.get("type", _legacy_type(obj))
    if kind not in MODELS:
        raise TokkitError(f"{where}: model type {kind!r} is not supported ({', '.join(MODELS)})")
    return MODELS[kind].from_json(obj, where)


def model_to_json(model: Model) -> dict:
    """The `model` object as tokenizers writes it."""
    return model.to_json()


def _legacy_type(obj: dict) -> str:
    """A model written without "type" (old tokenizers), told apart by its keys in tokenizers' order."""
    if "merges" in obj:
        return "BPE"
    if isinstance(obj.get("vocab"), list):
        return "Unigram"
    return "WordPiece" if all(key in obj for key in _WORDPIECE_KEYS) else "WordLevel"
