"""WordLevel (each piece is one vocabulary token or the unknown token), and the JSON field readers.

The readers check one field of a component's tokenizer.json object and name the file, the component
and the field in the one error line; every model, decoder and post-processor reads through them.

>>> m = WordLevel.from_json({"type": "WordLevel", "vocab": {"<unk>": 0, "hi": 1}, "unk_token": "<unk>"}, "t.json")
>>> m.tokenize("hi"), m.tokenize("yo")
([(1, 0, 2)], [(0, 0, 2)])
>>> WordLevel.from_json({"type": "WordLevel", "vocab": {"hi": 0}, "unk_token": 3}, "t.json")
Traceback (most recent call last):
tokkit.errors.TokkitError: t.json: model.WordLevel: field 'unk_token' must be a string, got an integer
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property

from tokkit._native.pipeline import ModelKind, token_blob
from tokkit.errors import TokkitError
from tokkit.tokenizer.vocab import token_ids, vocab_from_mapping

_MISSING = object()
_KINDS = {str: "a string", bool: "true or false", int: "an integer", float: "a number", list: "a list",
          dict: "an object", type(None): "null"}


def json_kind(value) -> str:
    """How an error line names a JSON value's type ("an integer", "null", ...)."""
    return _KINDS.get(type(value), type(value).__name__)


def json_field(obj: dict, key: str, kinds: tuple, where: str, default=_MISSING):
    """obj[key] when it has one of the JSON types `kinds` (as Python types), else one TokkitError.

    `where` names the file and the component ("t.json: model.BPE"). A bool is never an integer;
    an integer is a number. Without `default` the key must be present.

    >>> json_field({"a": 1}, "a", (float,), "t.json: decoder.X")
    1
    >>> json_field({"a": True}, "a", (int,), "t.json: decoder.X")
    Traceback (most recent call last):
    tokkit.errors.TokkitError: t.json: decoder.X: field 'a' must be an integer, got true or false
    """
    if key not in obj:
        if default is _MISSING:
            raise TokkitError(f"{where}: field '{key}' is missing")
        return default
    value = obj[key]
    kind = bool if isinstance(value, bool) else type(value)
    if kind not in kinds and not (kind is int and float in kinds):
        want = " or ".join(_KINDS[k] for k in kinds)
        raise TokkitError(f"{where}: field '{key}' must be {want}, got {json_kind(value)}")
    return value


def json_uint(obj: dict, key: str, where: str, bits: int, default=_MISSING) -> int:
    """An integer field that must fit an unsigned `bits`-bit integer, as tokenizers reads it."""
    value = json_field(obj, key, (int,), where, default)
    if not 0 <= value < 1 << bits:
        raise TokkitError(f"{where}: field '{key}' must be an integer from 0 to {(1 << bits) - 1}, got {value}")
    return value


def json_object(obj, where: str) -> dict:
    """`obj` when it is a JSON object."""
    if not isinstance(obj, dict):
        raise TokkitError(f"{where}: must be an object, got {json_kind(obj)}")
    return obj


def check_type(obj: dict, name: str, where: str) -> None:
    """The object's "type", when it has one, must be `name` (tokenizers reads a missing one by shape)."""
    if obj.get("type", name) != name:
        raise TokkitError(f"{where}: field 'type' must be {name!r}, got {obj['type']!r}")


def read_vocab(obj: dict, where: str) -> tuple[str | None, ...]:
    """The "vocab" object {token: id} as tokens in id order (None at an unused id; no id twice)."""
    return tuple(vocab_from_mapping(json_field(obj, "vocab", (dict,), where), f"{where}: field 'vocab'"))


def with_file_ids(model, obj: dict):
    """`model` with its `ids` taken from the file's "vocab" object where that lists the tokens in id
    order (then it is token_ids(vocab) already): a dict copy instead of rebuilding 128k entries.

    >>> m = with_file_ids(WordLevel(vocab=("a", "b"), unk_token="a"), {"vocab": {"a": 0, "b": 1}})
    >>> m.__dict__["ids"], "ids" in with_file_ids(WordLevel(("b", "a"), "a"), {"vocab": {"a": 1, "b": 0}}).__dict__
    ({'a': 0, 'b': 1}, False)
    """
    mapping = obj["vocab"]
    if len(mapping) == len(model.vocab) and model.vocab == tuple(mapping):
        model.__dict__["ids"] = dict(mapping)  # a copy: the caller's object may change later
    return model


class PlainState:
    """Pickles a frozen dataclass as its fields alone: its cached lookups (ids, ranks) are rebuilt on
    use, so a tokenizer sent to a worker process carries its vocabulary once."""

    def __getstate__(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __setstate__(self, state: dict) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)


@dataclass(frozen=True)
class WordLevel(PlainState):
    """tokenizers' WordLevel model: a piece in the vocabulary is its token, any other piece is `unk_token`.

    `vocab` lists the tokens in id order. `unk_token` must be in the vocabulary (tokenizers fails on
    the first unknown piece otherwise; tokkit refuses the file at load).

    >>> WordLevel(vocab=("[UNK]", "cat"), unk_token="[UNK]").tokenize("dog")
    [(0, 0, 3)]
    """

    vocab: tuple[str | None, ...]  # by id; None at an id the file leaves unused
    unk_token: str

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "WordLevel":
        at = f"{where}: model.WordLevel"
        json_object(obj, at)
        check_type(obj, "WordLevel", at)
        model = with_file_ids(cls(vocab=read_vocab(obj, at), unk_token=json_field(obj, "unk_token", (str,), at)),
                              obj)
        if model.unk_token not in model.ids:
            raise TokkitError(f"{at}: unk_token {model.unk_token!r} is not in the vocabulary")
        return model

    def to_json(self) -> dict:
        return {"type": "WordLevel", "vocab": token_ids(self.vocab), "unk_token": self.unk_token}

    @cached_property
    def ids(self) -> dict[str, int]:
        """token -> id."""
        return token_ids(self.vocab)

    @property
    def tokens(self) -> tuple[str | None, ...]:
        """The tokens by id."""
        return self.vocab

    def native(self) -> dict:
        """The compiled model's description (tokkit._native.pipeline.PipelineEncoder.build)."""
        return {"kind": ModelKind.M_WORDLEVEL, "unk_id": self.ids[self.unk_token], "tokens": token_blob(self.vocab)}

    def tokenize(self, piece: str) -> list[tuple[int, int, int]]:
        """[(id, start, end)] for one piece, offsets in characters: always one token, even for ""."""
        tid = self.ids.get(piece)
        return [(self.ids[self.unk_token] if tid is None else tid, 0, len(piece))]

