"""tokenizer.json's `post_processor`, read into a Template and written back in the type it came as.

BertProcessing, RobertaProcessing, ByteLevel (offset trimming, no special tokens) and
TemplateProcessing with any special-token names are understood; anything else is one error
naming the file and the field.

>>> from tokkit.tokenizer.spec import Template
>>> post = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": True,
...         "add_prefix_space": False}
>>> t = read_post(post, {"<s>": 0, "</s>": 2}, "tokenizer.json")
>>> t.pair
(('<s>', 0), ('$A', 0), ('</s>', 0), ('</s>', 0), ('$B', 0), ('</s>', 0))
>>> post_json(t, {"<s>": 0, "</s>": 2}) == post
True
"""
from __future__ import annotations

from tokkit.errors import TokkitError
from tokkit.tokenizer.spec import SEQUENCES, Template, bert_template

STYLES = ("BertProcessing", "RobertaProcessing", "ByteLevel", "TemplateProcessing")


def read_post(post: dict | None, ids: dict[str, int], where: str) -> Template | None:
    """The Template a `post_processor` object describes (None for null); `ids`: token -> id."""
    if post is None:
        return None
    ptype = post.get("type")
    if ptype not in STYLES:
        raise TokkitError(f"{where}: post_processor type {ptype!r} is not supported ({', '.join(STYLES)} or null)")
    trim = _flag(post, "trim_offsets", where)
    prefix = _flag(post, "add_prefix_space", where)
    if ptype == "ByteLevel":  # offsets only: the rows are the texts themselves
        return Template(single=(("$A", 0),), pair=(("$A", 0), ("$B", 1)), trim_offsets=trim,
                        add_prefix_space=prefix, style=ptype)
    if ptype == "TemplateProcessing":
        template = Template(single=_parts(post.get("single"), ("$A",), where, "single"),
                            pair=_parts(post.get("pair"), ("$A", "$B"), where, "pair"))
        _check_special_map(post.get("special_tokens"), template.tokens(), ids, where)
    else:
        cls, sep = (_token_and_id(post, key, ids, where, ptype) for key in ("cls", "sep"))
        if ptype == "BertProcessing":
            template = bert_template(cls, sep, style=ptype)
        else:  # RoBERTa: `<s> A </s></s> B </s>`, every type id 0
            template = Template(single=((cls, 0), ("$A", 0), (sep, 0)),
                                pair=((cls, 0), ("$A", 0), (sep, 0), (sep, 0), ("$B", 0), (sep, 0)),
                                trim_offsets=trim, add_prefix_space=prefix, style=ptype)
    for tok in template.tokens():
        if tok not in ids:
            raise TokkitError(f"{where}: post_processor names {tok!r}, which is not in the vocabulary")
    return template


def _flag(post: dict, key: str, where: str) -> bool:
    value = post.get(key, True)  # tokenizers' default for both flags
    if not isinstance(value, bool):
        raise TokkitError(f"{where}: field 'post_processor.{key}' must be true or false, got {value!r}")
    return value


def _token_and_id(post: dict, key: str, ids: dict[str, int], where: str, ptype: str) -> str:
    value = post.get(key)
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
            and isinstance(value[1], int) and not isinstance(value[1], bool)):
        raise TokkitError(f"{where}: post_processor {ptype} needs 'cls' and 'sep' as [token, id], got {key}={value!r}")
    if value[0] in ids and ids[value[0]] != value[1]:
        raise TokkitError(f"{where}: post_processor.{key} gives {value[0]!r} id {value[1]}, "
                          f"but the vocabulary gives it {ids[value[0]]}")
    return value[0]


def _parts(items, sequences: tuple[str, ...], where: str, field: str) -> tuple[tuple[str, int], ...]:
    """A template's parts as (name, type id), each of `sequences` exactly once."""
    name = f"post_processor.{field}"
    if not isinstance(items, list):
        raise TokkitError(f"{where}: field '{name}' must be a list of SpecialToken and Sequence parts")
    parts = []
    for k, item in enumerate(items):
        body = next(iter(item.values())) if isinstance(item, dict) and len(item) == 1 else None
        kind = next(iter(item)) if body is not None else None
        if (kind not in ("SpecialToken", "Sequence") or not isinstance(body, dict)
                or not isinstance(body.get("id"), str) or not isinstance(body.get("type_id"), int)
                or isinstance(body.get("type_id"), bool) or body["type_id"] < 0):
            raise TokkitError(f"{where}: {name}[{k}] must be {{\"SpecialToken\" or \"Sequence\": "
                              f"{{\"id\": ..., \"type_id\": N}}}}, got {item!r}")
        if kind == "Sequence":
            if "$" + body["id"] not in sequences:
                raise TokkitError(f"{where}: {name}[{k}] names sequence {body['id']!r}; "
                                  f"this template takes {' and '.join(s[1] for s in sequences)}")
            parts.append(("$" + body["id"], body["type_id"]))
        else:
            if body["id"] in SEQUENCES:
                raise TokkitError(f"{where}: {name}[{k}]: a special token cannot be named {body['id']!r}")
            parts.append((body["id"], body["type_id"]))
    for seq in sequences:
        if sum(p == seq for p, _ in parts) != 1:
            raise TokkitError(f"{where}: field '{name}' must hold ${seq[1:]} exactly once")
    return tuple(parts)


def _check_special_map(mapping, names: list[str], ids: dict[str, int], where: str) -> None:
    """Every special token of the template stands for itself, one token with its vocabulary id."""
    if not isinstance(mapping, dict):
        raise TokkitError(f"{where}: field 'post_processor.special_tokens' must be an object")
    for name in names:
        entry = mapping.get(name)
        if not isinstance(entry, dict) or entry.get("tokens") != [name] or name not in ids \
                or entry.get("ids") != [ids[name]]:
            raise TokkitError(f"{where}: post_processor.special_tokens[{name!r}] must hold the one token "
                              f"{name!r} and its vocabulary id (tokkit supports no other), got {entry!r}")


def post_json(template: Template | None, ids: dict[str, int]) -> dict | None:
    """The `post_processor` object for `template`, as tokenizers writes that type."""
    if template is None:
        return None
    if template.style == "ByteLevel":
        return {"type": "ByteLevel", "add_prefix_space": template.add_prefix_space,
                "trim_offsets": template.trim_offsets, "use_regex": True}
    if template.style in ("BertProcessing", "RobertaProcessing"):
        cls, sep = template.single[0][0], template.single[2][0]
        out = {"type": template.style, "sep": [sep, ids[sep]], "cls": [cls, ids[cls]]}
        if template.style == "RobertaProcessing":
            out.update(trim_offsets=template.trim_offsets, add_prefix_space=template.add_prefix_space)
        return out

    def part(name, type_id):
        if name in SEQUENCES:
            return {"Sequence": {"id": name[1:], "type_id": type_id}}
        return {"SpecialToken": {"id": name, "type_id": type_id}}

    return {"type": "TemplateProcessing", "single": [part(*p) for p in template.single],
            "pair": [part(*p) for p in template.pair],
            "special_tokens": {tok: {"id": tok, "ids": [ids[tok]], "tokens": [tok]} for tok in sorted(template.tokens())}}
