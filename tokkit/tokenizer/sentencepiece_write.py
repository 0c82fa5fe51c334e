"""SentencePiece `.model` files written: a protobuf encoder over the reader's field tables.

`model_to_bytes(model)` serializes a SentencePieceModel (the dataclasses sentencepiece_model.py
reads) as a ModelProto, by the same field tables the reader uses: each message's fields in field
number order, as protobuf writes them; every singular field is written, defaults included, so the
file says what it means without relying on the reader's defaults; a repeated field once per value;
a message that is None (no denormalizer) is left out. The same model always gives the same bytes.

>>> from tokkit.tokenizer.sentencepiece_model import Piece, SentencePieceModel, model_from_bytes
>>> model = SentencePieceModel(pieces=(Piece("<unk>", 0.0, "UNKNOWN"), Piece("\\u2581a", -1.5)))
>>> data = model_to_bytes(model)
>>> data[:9]  # pieces (field 1, length-delimited): 14 bytes; piece (field 1): 5 bytes
b'\\n\\x0e\\n\\x05<unk>'
>>> model_from_bytes(data, "x.model").pieces == model.pieces
True
"""
from __future__ import annotations

import math
import struct

from tokkit.errors import TokkitError
from tokkit.tokenizer.sentencepiece_model import (
    ENUMS,
    MESSAGES,
    MODEL_FIELDS,
    WIRE_TYPES,
    SentencePieceModel,
    check_model,
)

_FLOAT = struct.Struct("<f")
_INT32 = (-(1 << 31), (1 << 31) - 1)
_CODES = {kind: {name: code for code, name in names.items()} for kind, names in ENUMS.items()}


def model_to_bytes(model: SentencePieceModel, where: str = "model") -> bytes:
    """The ModelProto bytes of `model`, checked first as sentencepiece checks a model it loads.

    A value protobuf cannot hold (a score that is not a finite float32, an int32 out of range, text
    that is not valid Unicode) is one TokkitError naming `where` and the field.
    """
    check_model(model, where)
    return _message(model, MODEL_FIELDS, where)


def varint(value: int) -> bytes:
    """Protobuf's base-128 varint; a negative number is written as its 64-bit two's complement (10 bytes).

    >>> varint(1), varint(300), len(varint(-1))
    (b'\\x01', b'\\xac\\x02', 10)
    """
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _message(obj, fields: dict, what: str) -> bytes:
    """The fields of the dataclass `obj` present in `fields`, in field number order."""
    out = bytearray()
    for number in sorted(fields):
        name, kind, repeated = fields[number]
        value = getattr(obj, name)
        key = varint(number << 3 | WIRE_TYPES[kind])
        for item in value if repeated else (value,):
            if item is not None:
                out += key
                out += _value(kind, item, f"{what}.{name}")
    return bytes(out)


def _value(kind: str, value, what: str) -> bytes:
    """One field's value after its key: a scalar, an enum's number, or a length-delimited message."""
    if kind in MESSAGES:
        return _delimited(_message(value, MESSAGES[kind][1], what))
    if kind in _CODES:
        if value not in _CODES[kind]:
            raise TokkitError(f"{what}: unknown value {value!r} (one of {', '.join(_CODES[kind])})")
        return varint(_CODES[kind][value])
    if kind == "string":
        try:
            return _delimited(value.encode("utf-8"))
        except UnicodeEncodeError:
            raise TokkitError(f"{what}: {value!r} is not valid Unicode (it holds a lone surrogate)") from None
    if kind == "bytes":
        return _delimited(bytes(value))
    if kind == "bool":
        return varint(int(bool(value)))
    if kind == "int32":
        if isinstance(value, bool) or not _INT32[0] <= value <= _INT32[1]:
            raise TokkitError(f"{what}: {value!r} is not a 32-bit integer")
        return varint(value)
    return _float(value, what)


def _float(value: float, what: str) -> bytes:
    """A fixed32 float; a value no float32 holds is refused rather than written as infinity."""
    try:
        packed = _FLOAT.pack(value)
    except OverflowError:
        packed = b""
    if not packed or not math.isfinite(_FLOAT.unpack(packed)[0]):
        raise TokkitError(f"{what}: {value!r} is not a finite 32-bit float")
    return packed


def _delimited(data: bytes) -> bytes:
    return varint(len(data)) + data
