"""Reading a tokenizer.json component's JSON object: its fields checked, its class found by type.

>>> read_fields({"type": "Strip", "strip_left": True}, "t.json: normalizer.Strip", {"strip_left": ((bool,), REQUIRED)})
{'strip_left': True}
"""
from __future__ import annotations

from tokkit.errors import TokkitError
from tokkit.tokenizer.models.wordlevel import json_field, json_kind, json_object

REQUIRED = object()


def read_fields(obj, where: str, fields: dict) -> dict:
    """Check a component's JSON object: `fields` maps each allowed key to (types, default or
    REQUIRED); an unknown key, a missing required one or a wrong type is one TokkitError.

    >>> read_fields({"type": "X", "a": 1}, "t.json: normalizer.X", {"a": ((bool,), REQUIRED)})
    Traceback (most recent call last):
    tokkit.errors.TokkitError: t.json: normalizer.X: field 'a' must be true or false, got an integer
    """
    json_object(obj, where)
    for key in obj:
        if key != "type" and key not in fields:
            raise TokkitError(f"{where}: unknown field {key!r} (tokkit reads {', '.join(fields) or 'none'})")
    out = {}
    for key, (types, default) in fields.items():
        extra = () if default is REQUIRED else (default,)  # json_field: no default means required
        out[key] = json_field(obj, key, types, where, *extra)
    return out


def read_pattern(obj, where: str) -> dict:
    """A pattern object as tokenizers writes it: {"String": s} or {"Regex": r}."""
    if not isinstance(obj, dict) or len(obj) != 1 or next(iter(obj)) not in ("String", "Regex") \
            or not isinstance(next(iter(obj.values())), str):
        raise TokkitError(f"{where}: field 'pattern' must be {{\"String\": text}} or {{\"Regex\": pattern}}, "
                          f"got {obj!r}")
    return dict(obj)


def fields_of(cls) -> dict:
    """A component class's JSON fields (its `_FIELDS`), for read_fields."""
    return getattr(cls, "_FIELDS", {})


def component_from_json(table: dict, obj, where: str, family: str):
    """The component of `table` (type name -> class) that a JSON object names, read by its class.

    >>> component_from_json({}, {"type": "X"}, "t.json", "normalizer")
    Traceback (most recent call last):
    tokkit.errors.TokkitError: t.json: normalizer type 'X' is not supported ()
    """
    if not isinstance(obj, dict):
        raise TokkitError(f"{where}: {family} must be an object, got {json_kind(obj)}")
    kind = obj.get("type")
    if kind not in table:
        raise TokkitError(f"{where}: {family} type {kind!r} is not supported ({', '.join(table)})")
    return table[kind].from_json(obj, where)
