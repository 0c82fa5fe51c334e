"""Reading a tokenizer.json component's JSON object: its fields checked, its class found by type.

>>> read_fields({"type": "Strip", "strip_left": True}, "t.json: normalizer.Strip", {"strip_left": ((bool,), REQUIRED)})
{'strip_left': True}
"""
from __future__ import annotations

from tokkit.errors import TokkitError
from tokkit.tokenizer.models.wordlevel import json_field, json_kind, json_object

REQUIRED = object()
# The deepest JSON tokenizers reads (serde_json's limit: a container at level 128 is an error), the
# document itself being level 1: a component nests at most 62 Sequences around a leaf without
# objects of its own. Hub files nest one or two.
MAX_JSON_DEPTH = 127


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


def check_depth(value, where: str, field: str) -> None:
    """Refuse a component nested deeper than tokenizers reads, before anything recurses into it.

    >>> check_depth({"type": "Sequence", "normalizers": [[[[]]]]}, "t.json", "normalizer")
    >>> deep = []
    >>> for _ in range(MAX_JSON_DEPTH):
    ...     deep = [deep]
    >>> check_depth(deep, "t.json", "normalizer")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    tokkit.errors.TokkitError: t.json: normalizer is nested too deeply (tokenizers reads 127 levels of JSON, ...)
    """
    stack = [(value, 2)]  # the document is level 1, its fields' values level 2
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (dict, list)):
            continue
        if depth > MAX_JSON_DEPTH:
            raise TokkitError(f"{where}: {field} is nested too deeply (tokenizers reads {MAX_JSON_DEPTH} levels of "
                              f"JSON, about {(MAX_JSON_DEPTH - 3) // 2} Sequences)")
        stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))


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
