"""SentencePiece `.model` files: a protobuf reader, and the tokenizer.json pipeline that encodes alike.

A `.model` file is a serialized ModelProto (sentencepiece_model.proto). It is read by a small
reader of the protobuf wire format: the fields tokkit needs become frozen dataclasses, every other
field is skipped by its wire type, and nothing in the file is executed. A truncated or malformed
file is one TokkitError naming it.

`tokenizer_json_from_sentencepiece` writes the pipeline that gives sentencepiece's ids:
  - normalizer: Precompiled (the character map; sentencepiece finds user-defined symbols before it,
    so each symbol the map would change is a code of noncharacters U+FDD0-U+FDEF while it runs, by
    a Replace before it and one after), Replace " {2,}" -> " " and "\\A " -> "" (leading
    and repeated spaces, remove_extra_whitespaces), Replace " " -> U+2581 (escape_whitespaces),
    Replace "U+2581+\\z" -> "" (sentencepiece also drops trailing U+2581 typed in the text), then
    Prepend U+2581 (add_dummy_prefix; Prepend, unlike Metaspace's prepend_scheme, prefixes text that
    already starts with U+2581, as sentencepiece does). Without remove_extra_whitespaces the prefix is
    marked by a noncharacter U+FFFF put first and written last, so a text the map empties ("\\x01")
    still gets it, as sentencepiece gives it to any text it reads that is not empty;
  - pre-tokenizer: Metaspace split before U+2581 when no piece holds one after its first character;
  - model: Unigram with the file's scores, or BPE with merges from the pieces' scores (a char model
    is BPE without merges), fuse_unk and byte_fallback as sentencepiece joins unknown runs;
  - control pieces become special added tokens; user-defined pieces stay whole in Unigram through the
    score sentencepiece gives them when encoding, and are normalized added tokens elsewhere, where
    the dummy prefix is a Replace of the text's start that leaves a text of one symbol alone;
  - decoder: U+2581 -> " ", ByteFallback, the unknown piece shown as unk_surface, Fuse, Strip one space.

Where no combination of components gives sentencepiece's ids:
  - tokenizers' Precompiled rewrites each grapheme under 6 bytes by the rule of its shortest matching
    prefix (else character by character); sentencepiece applies the longest rule at each position.
    They differ on CR LF (one space, not two), a letter with several combining marks, NBSP followed by
    a combining mark (the mark is dropped), halfwidth katakana with a voiced mark, Hangul jamo runs and
    some Tamil vowel signs;
  - sentencepiece never matches control, unknown or byte pieces in text; tokenizers matches added
    tokens in any text, and a Unigram picks any vocabulary entry, so "<s>", "<unk>" or "<0x41>" typed
    in the text become those ids;
  - Unigram ties: sentencepiece sums path scores in 32-bit floats, tokenizers in 64-bit, so two
    segmentations of equal score may be picked differently;
  - BPE and char models with user-defined symbols: a text that is one symbol and nothing else (as
    typed without remove_extra_whitespaces; else once the map and the space rules are done) gets no
    U+2581 piece before it (tokenizers' schema cannot say it: a normalized added token's own text is
    normalized as the text is, so prefixing one prefixes the other), and keeps a symbol's trailing
    U+2581; a symbol of spaces alone never matches (sentencepiece writes its spaces as U+2581 too);
    with treat_whitespace_as_suffix, the text between symbols is normalized part by part;
  - text holding the noncharacters U+FDD0-U+FDEF or U+FFFF, which are never text, may read as a
    user-defined symbol or the dummy prefix;
  - decoding: sentencepiece drops a leading U+2581 from each piece until some text is written, the
    decoder one space (they differ on a text that began with a typed U+2581); without the dummy prefix
    nothing is dropped, where sentencepiece would drop a typed leading U+2581;
  - UNUSED pieces (sentencepiece skips them, or splits them back) and a denormalizer character map
    (applied by sentencepiece's decode) are not reproduced; "word" models are refused.

>>> unk, a = b"\\n\\x09\\n\\x05<unk>\\x18\\x02", b"\\n\\x08\\n\\x01a\\x15\\x00\\x00\\x80\\xbf"
>>> specs = b"\\x12\\x00\\x1a\\x00"  # trainer_spec and normalizer_spec, empty (all defaults)
>>> model = model_from_bytes(unk + a + specs, "tiny.model")
>>> [(p.piece, p.score, p.type) for p in model.pieces]
[('<unk>', 0.0, 'UNKNOWN'), ('a', -1.0, 'NORMAL')]
>>> model.trainer_spec.model_type, model.normalizer_spec.add_dummy_prefix
('unigram', True)
>>> model_from_bytes(unk + b"\\n", "cut.model")
Traceback (most recent call last):
tokkit.errors.TokkitError: cut.model: not a SentencePiece model: field 'pieces' is cut short at byte 12
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from tokkit.errors import TokkitError

PIECE_TYPES = {1: "NORMAL", 2: "UNKNOWN", 3: "CONTROL", 4: "USER_DEFINED", 5: "UNUSED", 6: "BYTE"}
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}


@dataclass(frozen=True)
class Piece:
    """One vocabulary entry: its text, its score (log probability or merge order) and its type."""

    piece: str = ""
    score: float = 0.0
    type: str = "NORMAL"


@dataclass(frozen=True)
class TrainerSpec:
    """The training options that still shape encoding, and the two a trainer's file records besides
    (character_coverage, max_sentencepiece_length); the others are skipped on reading."""

    model_type: str = "unigram"
    vocab_size: int = 8000
    character_coverage: float = 0.9995
    max_sentencepiece_length: int = 16
    byte_fallback: bool = False
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"
    unk_surface: str = " \u2047 "
    split_digits: bool = False
    split_by_whitespace: bool = True
    treat_whitespace_as_suffix: bool = False
    allow_whitespace_only_pieces: bool = False
    control_symbols: tuple[str, ...] = ()
    user_defined_symbols: tuple[str, ...] = ()


@dataclass(frozen=True)
class NormalizerSpec:
    """How text is normalized before the model: the compiled character map and the space rules."""

    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True


@dataclass(frozen=True)
class SentencePieceModel:
    """A parsed `.model` file. `denormalizer_spec` is None when the file has none (the usual case)."""

    pieces: tuple[Piece, ...] = ()
    trainer_spec: TrainerSpec = TrainerSpec()
    normalizer_spec: NormalizerSpec = NormalizerSpec()
    denormalizer_spec: NormalizerSpec | None = None


# ------------------------------------------------------------------------------ the wire format
_VARINT, _FIXED64, _BYTES, _GROUP_START, _GROUP_END, _FIXED32 = 0, 1, 2, 3, 4, 5
_MAX_GROUP_DEPTH = 64
_FLOAT = struct.Struct("<f")


class _Malformed(Exception):
    """Raised inside the reader; turned into one TokkitError naming the file at the top."""


def _name(what: str) -> str:
    return f"field '{what}'" if what else "a field key"


def _varint(data: bytes, pos: int, end: int, what: str) -> tuple[int, int]:
    """The varint at `pos` and the position after it (at most 10 bytes, as protobuf allows)."""
    if pos < end and data[pos] < 0x80:
        return data[pos], pos + 1
    value = shift = 0
    for i in range(pos, min(pos + 10, end)):
        byte = data[i]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i + 1
        shift += 7
    if end - pos >= 10:
        raise _Malformed(f"{_name(what)} holds a varint longer than 10 bytes at byte {pos}")
    raise _Malformed(f"{_name(what)} is cut short at byte {pos}")


def _skip(data: bytes, pos: int, end: int, wire: int, number: int, what: str) -> int:
    """The position after a value of wire type `wire` (a group: after its matching end)."""
    groups = [number] if wire == _GROUP_START else []
    while True:
        if wire == _VARINT:
            pos = _varint(data, pos, end, what)[1]
        elif wire in (_FIXED64, _FIXED32):
            pos += 8 if wire == _FIXED64 else 4
        elif wire == _BYTES:
            length, pos = _varint(data, pos, end, what)
            pos += length
        elif wire == _GROUP_END and groups and groups[-1] == number:
            groups.pop()
        elif wire != _GROUP_START or len(groups) > _MAX_GROUP_DEPTH:
            raise _Malformed(f"{_name(what)} has an invalid wire type {wire} at byte {pos}")
        if pos > end:
            raise _Malformed(f"{_name(what)} is cut short at byte {end}")
        if not groups:
            return pos
        key, pos = _varint(data, pos, end, what)
        number, wire = key >> 3, key & 7
        if wire == _GROUP_START:
            groups.append(number)


def _span(data: bytes, pos: int, end: int, what: str) -> tuple[int, int]:
    """(start, end) of a length-delimited value."""
    length, pos = _varint(data, pos, end, what)
    if pos + length > end:
        raise _Malformed(f"{_name(what)} is cut short at byte {pos} (says {length} bytes, {end - pos} left)")
    return pos, pos + length


def _read_string(data: bytes, pos: int, end: int, what: str) -> tuple[str, int]:
    start, stop = _span(data, pos, end, what)
    try:
        return data[start:stop].decode("utf-8"), stop
    except UnicodeDecodeError:
        raise _Malformed(f"{_name(what)} is not valid UTF-8 at byte {start}") from None


def _read_bytes(data: bytes, pos: int, end: int, what: str) -> tuple[bytes, int]:
    start, stop = _span(data, pos, end, what)
    return data[start:stop], stop


def _read_float(data: bytes, pos: int, end: int, what: str) -> tuple[float, int]:
    if pos + 4 > end:
        raise _Malformed(f"{_name(what)} is cut short at byte {pos}")
    return _FLOAT.unpack_from(data, pos)[0], pos + 4


def _read_bool(data: bytes, pos: int, end: int, what: str) -> tuple[bool, int]:
    raw, pos = _varint(data, pos, end, what)
    return raw != 0, pos


def _read_int32(data: bytes, pos: int, end: int, what: str) -> tuple[int, int]:
    raw, pos = _varint(data, pos, end, what)
    raw &= 0xFFFFFFFF  # a negative int32 is written as ten bytes of two's complement
    return (raw - (1 << 32) if raw >= 1 << 31 else raw), pos


def _enum(names: dict):
    def read(data: bytes, pos: int, end: int, what: str) -> tuple[str, int]:
        raw, pos = _varint(data, pos, end, what)
        if raw not in names:
            raise _Malformed(f"{_name(what)} has unknown value {raw}")
        return names[raw], pos
    return read


def _submessage(cls, table: dict, fast=None):
    def read(data: bytes, pos: int, end: int, what: str):
        start, stop = _span(data, pos, end, what)
        return (fast and fast(data, start, stop)) or _message(data, start, stop, cls, table, what), stop
    return read


def _piece(data: bytes, pos: int, end: int) -> Piece | None:
    """The usual piece message (text, then score and type under one-byte keys) read inline, as a
    model holds up to a few hundred thousand; None sends anything else to the general reader."""
    if end - pos < 2 or data[pos] != 0x0A or data[pos + 1] >= 0x80 or pos + 2 + data[pos + 1] > end:
        return None
    stop = pos + 2 + data[pos + 1]
    try:
        text = data[pos + 2:stop].decode("utf-8")
    except UnicodeDecodeError:
        return None
    score, kind = 0.0, "NORMAL"
    if stop + 5 <= end and data[stop] == 0x15:
        score, stop = _FLOAT.unpack_from(data, stop + 1)[0], stop + 5
    if stop + 2 <= end and data[stop] == 0x18 and data[stop + 1] in PIECE_TYPES:
        kind, stop = PIECE_TYPES[data[stop + 1]], stop + 2
    return Piece(text, score, kind) if stop == end else None


# The fields tokkit reads and writes (sentencepiece_write.py encodes by these same tables), numbered as in
# sentencepiece_model.proto: message -> {field number: (dataclass field, kind, repeated)}. A kind is a
# scalar ("string", "bytes", "bool", "int32", "float"), an enum ("piece_type", "model_type") or a message.
PIECE_FIELDS = {1: ("piece", "string", False), 2: ("score", "float", False), 3: ("type", "piece_type", False)}
TRAINER_FIELDS = {3: ("model_type", "model_type", False), 4: ("vocab_size", "int32", False),
                  10: ("character_coverage", "float", False), 20: ("max_sentencepiece_length", "int32", False),
                  22: ("split_by_whitespace", "bool", False), 24: ("treat_whitespace_as_suffix", "bool", False),
                  25: ("split_digits", "bool", False), 26: ("allow_whitespace_only_pieces", "bool", False),
                  30: ("control_symbols", "string", True), 31: ("user_defined_symbols", "string", True),
                  35: ("byte_fallback", "bool", False), 40: ("unk_id", "int32", False), 41: ("bos_id", "int32", False),
                  42: ("eos_id", "int32", False), 43: ("pad_id", "int32", False), 44: ("unk_surface", "string", False),
                  45: ("unk_piece", "string", False), 46: ("bos_piece", "string", False),
                  47: ("eos_piece", "string", False), 48: ("pad_piece", "string", False)}
NORMALIZER_FIELDS = {1: ("name", "string", False), 2: ("precompiled_charsmap", "bytes", False),
                     3: ("add_dummy_prefix", "bool", False), 4: ("remove_extra_whitespaces", "bool", False),
                     5: ("escape_whitespaces", "bool", False)}
MODEL_FIELDS = {1: ("pieces", "piece", True), 2: ("trainer_spec", "trainer_spec", False),
                3: ("normalizer_spec", "normalizer_spec", False), 5: ("denormalizer_spec", "normalizer_spec", False)}
ENUMS = {"piece_type": PIECE_TYPES, "model_type": MODEL_TYPES}
MESSAGES = {"piece": (Piece, PIECE_FIELDS), "trainer_spec": (TrainerSpec, TRAINER_FIELDS),
            "normalizer_spec": (NormalizerSpec, NORMALIZER_FIELDS), "model": (SentencePieceModel, MODEL_FIELDS)}

WIRE_TYPES = {"string": _BYTES, "bytes": _BYTES, "bool": _VARINT, "int32": _VARINT, "float": _FIXED32,
              **{kind: _VARINT for kind in ENUMS}, **{kind: _BYTES for kind in MESSAGES}}

# The reader's tables: field number -> (dataclass field, (wire type, reader), repeated). Unknown field
# numbers are skipped by their wire type; a known one with another wire type is an error.
_SCALARS = {"string": _read_string, "bytes": _read_bytes, "bool": _read_bool, "int32": _read_int32,
            "float": _read_float}


def _reader_table(fields: dict) -> dict:
    return {number: (name, (WIRE_TYPES[kind], _kind_reader(kind)), repeated)
            for number, (name, kind, repeated) in fields.items()}


def _kind_reader(kind: str):
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind in ENUMS:
        return _enum(ENUMS[kind])
    cls, fields = MESSAGES[kind]
    return _submessage(cls, _reader_table(fields), _piece if kind == "piece" else None)


_MODEL = _reader_table(MODEL_FIELDS)


def _message(data: bytes, pos: int, end: int, cls, table: dict, what: str = ""):
    """Read the message in data[pos:end] into the dataclass `cls`, by its field table."""
    return cls(**_values(data, pos, end, table, what))


def _values(data: bytes, pos: int, end: int, table: dict, what: str = "") -> dict:
    """The fields of the message in data[pos:end] present in `table`, by dataclass field name."""
    values: dict = {}
    while pos < end:
        key, pos = _varint(data, pos, end, what)
        number, wire = key >> 3, key & 7
        if number not in table:
            if number == 0:
                raise _Malformed(f"{_name(what)} holds field number 0 at byte {pos}")
            pos = _skip(data, pos, end, wire, number, f"{what}.#{number}" if what else f"#{number}")
            continue
        name, (expected, read), repeated = table[number]
        inner = f"{what}.{name}" if what else name
        if wire != expected:
            raise _Malformed(f"field '{inner}' has wire type {wire}, expected {expected}")
        value, pos = read(data, pos, end, inner)
        if repeated:
            values.setdefault(name, []).append(value)
        else:
            values[name] = value
    return {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}


def model_from_bytes(data: bytes, where: str) -> SentencePieceModel:
    """Parse a serialized ModelProto; any malformed or truncated input is one TokkitError naming `where`."""
    data = bytes(data)
    try:
        values = _values(data, 0, len(data), _MODEL)
    except _Malformed as exc:
        raise TokkitError(f"{where}: not a SentencePiece model: {exc}") from None
    # Every model sentencepiece writes has all three; one missing means a file cut short between fields.
    for name in ("pieces", "trainer_spec", "normalizer_spec"):
        if name not in values:
            raise TokkitError(f"{where}: not a SentencePiece model: it holds no {name}")
    model = SentencePieceModel(**values)
    check_model(model, where)
    return model


def read_model(path: str | Path) -> SentencePieceModel:
    """Read a SentencePiece `.model` file."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TokkitError(f"{path}: cannot read ({exc.strerror})") from None
    return model_from_bytes(data, str(path))


def check_model(model: SentencePieceModel, where: str) -> None:
    """What sentencepiece itself checks when it loads a model: pieces present, distinct, one unknown."""
    if not model.pieces:
        raise TokkitError(f"{where}: not a SentencePiece model: it holds no pieces")
    seen: dict[str, int] = {}
    for i, p in enumerate(model.pieces):
        if not p.piece:
            raise TokkitError(f"{where}: piece {i} is empty")
        if p.piece in seen:
            raise TokkitError(f"{where}: piece {p.piece!r} is defined twice (ids {seen[p.piece]} and {i})")
        seen[p.piece] = i
    unknown = [i for i, p in enumerate(model.pieces) if p.type == "UNKNOWN"]
    if len(unknown) != 1:
        raise TokkitError(f"{where}: a model needs exactly one UNKNOWN piece, this one has {len(unknown)}")
    byte_pieces = {p.piece for p in model.pieces if p.type == "BYTE"}
    if byte_pieces and not model.trainer_spec.byte_fallback:
        raise TokkitError(f"{where}: byte pieces are present although byte_fallback is false")
    if model.trainer_spec.byte_fallback and byte_pieces != {f"<0x{b:02X}>" for b in range(256)}:
        raise TokkitError(f"{where}: byte_fallback needs the 256 byte pieces <0x00>..<0xFF>")
    for name in ("normalizer_spec", "denormalizer_spec"):
        spec = getattr(model, name)
        if spec is not None and spec.precompiled_charsmap:
            _check_charsmap(spec.precompiled_charsmap, f"{where}: {name}.precompiled_charsmap")


def _check_charsmap(blob: bytes, where: str) -> None:
    """The character map's frame: a 4-byte trie size, the trie, then the UTF-8 replacement strings."""
    size = int.from_bytes(blob[:4], "little")
    if len(blob) <= 4 or size % 4 or 4 + size > len(blob):
        raise TokkitError(f"{where}: broken (trie of {size} bytes in a map of {len(blob)})")
    try:
        blob[4 + size:].decode("utf-8")
    except UnicodeDecodeError:
        raise TokkitError(f"{where}: the replacement strings are not valid UTF-8") from None
