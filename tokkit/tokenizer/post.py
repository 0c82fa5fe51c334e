"""tokenizer.json's `post_processor`: components read and written as tokenizers does, and the Template they make.

BertProcessing, RobertaProcessing, ByteLevel (offset trimming, no special tokens), TemplateProcessing
and a Sequence of them are understood; anything else is one error naming the file and the field.
`post_from_json` gives the component (written back exactly by `post_to_json`), `post_template` the
Template tokkit.encode lays rows out by. tokenizers tells Roberta, Bert and TemplateProcessing apart
by their fields, not by "type": a "RobertaProcessing" without `trim_offsets` and `add_prefix_space`
is a BertProcessing, and is written back as one.

>>> post = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": True,
...         "add_prefix_space": False}
>>> t = post_template(post_from_json(post, "tokenizer.json"), "tokenizer.json")
>>> t.pair, t.id_of("</s>")
((('<s>', 0), ('$A', 0), ('</s>', 0), ('</s>', 0), ('$B', 0), ('</s>', 0)), 2)
>>> post_to_json(post_from_json(post, "tokenizer.json")) == post
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from tokkit.errors import TokkitError
from tokkit.tokenizer.models.wordlevel import json_field, json_object

STYLES = ("BertProcessing", "RobertaProcessing", "ByteLevel", "TemplateProcessing", "Sequence")
TYPE_IDS = 1 << 32  # tokenizers keeps type ids in a u32
SEQUENCES = ("$A", "$B")
Part = tuple[str, int]  # ("$A" | "$B" | special token, type id)


@dataclass(frozen=True)
class Template:
    """What a post-processor does to a row: the special tokens around one text or a pair, and the
    offset trimming.

    `single` and `pair` list the row's parts in order as (name, type id): "$A" and "$B" stand for
    the texts, any other name is a special token. `trim_offsets` drops the spaces a byte-level
    token carries from its offsets (`add_prefix_space`: except the one space of a first token).
    `ids` gives each special token's id as the post-processor says, which need not be the
    vocabulary's (nor the token in it).

    >>> t = bert_template("[CLS]", "[SEP]", ids={"[CLS]": 2, "[SEP]": 3})
    >>> t.pair
    (('[CLS]', 0), ('$A', 0), ('[SEP]', 0), ('$B', 1), ('[SEP]', 1))
    >>> t.specials(pair=True), t.id_of("[SEP]")
    (3, 3)
    """

    single: tuple[Part, ...]
    pair: tuple[Part, ...]
    trim_offsets: bool = False
    add_prefix_space: bool = False
    ids: tuple[tuple[str, int], ...] = ()

    def id_of(self, name: str) -> int:
        """The id a special token of the template is written as."""
        return dict(self.ids)[name]

    def parts(self, pair: bool) -> tuple[Part, ...]:
        return self.pair if pair else self.single

    def specials(self, pair: bool) -> int:
        """How many special tokens a row gets (what truncation leaves room for)."""
        return sum(name not in SEQUENCES for name, _ in self.parts(pair))

    def tokens(self) -> list[str]:
        """The special tokens the template names, each once, in order of appearance."""
        return list(dict.fromkeys(n for n, _ in self.single + self.pair if n not in SEQUENCES))


def bert_template(cls: str, sep: str, *, ids: dict[str, int]) -> Template:
    """`cls $A sep` and `cls $A sep $B:1 sep:1`: BERT's template, `ids` giving the two tokens' ids."""
    return Template(single=((cls, 0), ("$A", 0), (sep, 0)), pair=((cls, 0), ("$A", 0), (sep, 0), ("$B", 1), (sep, 1)),
                    ids=((cls, ids[cls]), (sep, ids[sep])))


def bert_processing(ids: dict[str, int]) -> TemplateProcessing:
    """BERT's template as tokenizers' trainers and transformers write it: `[CLS] $A [SEP]` and
    `[CLS] $A [SEP] $B:1 [SEP]:1`, `ids` giving [CLS]'s and [SEP]'s ids.

    >>> bert_processing({"[CLS]": 2, "[SEP]": 3}).template().id_of("[CLS]")
    2
    """
    template = bert_template("[CLS]", "[SEP]", ids=ids)
    return TemplateProcessing(single=template.single, pair=template.pair,
                              special_tokens=tuple((t, t, (ids[t],), (t,)) for t in ("[CLS]", "[SEP]")))


def _token_and_id(obj: dict, key: str, where: str) -> tuple[str, int]:
    value = json_field(obj, key, (list,), where)
    if not (len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], int)
            and not isinstance(value[1], bool) and 0 <= value[1] < TYPE_IDS):
        raise TokkitError(f"{where}: field '{key}' must be [token, id], got {value!r}"[:300])
    return value[0], value[1]


@dataclass(frozen=True)
class BertProcessing:
    """`cls A sep` and `cls A sep B:1 sep:1`.

    >>> BertProcessing(sep=("[SEP]", 102), cls=("[CLS]", 101)).template().pair[-1]
    ('[SEP]', 1)
    """

    sep: tuple[str, int]
    cls: tuple[str, int]

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "BertProcessing":
        at = f"{where}: post_processor.BertProcessing"
        return cls(sep=_token_and_id(obj, "sep", at), cls=_token_and_id(obj, "cls", at))

    def to_json(self) -> dict:
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}

    def template(self) -> Template:
        return bert_template(self.cls[0], self.sep[0], ids=dict((self.cls, self.sep)))


@dataclass(frozen=True)
class RobertaProcessing:
    """`cls A sep` and `cls A sep sep B sep`, every type id 0, with byte-level offset trimming.

    >>> RobertaProcessing(sep=("</s>", 2), cls=("<s>", 0)).template().specials(pair=True)
    4
    """

    sep: tuple[str, int]
    cls: tuple[str, int]
    trim_offsets: bool = True
    add_prefix_space: bool = True

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "RobertaProcessing":
        at = f"{where}: post_processor.RobertaProcessing"
        return cls(sep=_token_and_id(obj, "sep", at), cls=_token_and_id(obj, "cls", at),
                   trim_offsets=json_field(obj, "trim_offsets", (bool,), at),
                   add_prefix_space=json_field(obj, "add_prefix_space", (bool,), at))

    def to_json(self) -> dict:
        return {"type": "RobertaProcessing", "sep": list(self.sep), "cls": list(self.cls),
                "trim_offsets": self.trim_offsets, "add_prefix_space": self.add_prefix_space}

    def template(self) -> Template:
        cls, sep = self.cls[0], self.sep[0]
        return Template(single=((cls, 0), ("$A", 0), (sep, 0)),
                        pair=((cls, 0), ("$A", 0), (sep, 0), (sep, 0), ("$B", 0), (sep, 0)),
                        trim_offsets=self.trim_offsets, add_prefix_space=self.add_prefix_space,
                        ids=(self.cls, self.sep))


@dataclass(frozen=True)
class PostByteLevel:
    """tokenizers' ByteLevel post-processor: no special tokens, only the trimming of offsets.

    `use_regex` belongs to the pre-tokenizer of the same name and is only written back.

    >>> PostByteLevel(add_prefix_space=False, trim_offsets=True).template().pair
    (('$A', 0), ('$B', 1))
    """

    add_prefix_space: bool = True
    trim_offsets: bool = True
    use_regex: bool = True

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "PostByteLevel":
        at = f"{where}: post_processor.ByteLevel"
        if json_field(obj, "type", (str,), at) != "ByteLevel":
            raise TokkitError(f"{at}: field 'type' must be 'ByteLevel', got {obj['type']!r}")
        return cls(add_prefix_space=json_field(obj, "add_prefix_space", (bool,), at),
                   trim_offsets=json_field(obj, "trim_offsets", (bool,), at),
                   use_regex=json_field(obj, "use_regex", (bool,), at, True))

    def to_json(self) -> dict:
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space, "trim_offsets": self.trim_offsets,
                "use_regex": self.use_regex}

    def template(self) -> Template:
        return Template(single=(("$A", 0),), pair=(("$A", 0), ("$B", 1)), trim_offsets=self.trim_offsets,
                        add_prefix_space=self.add_prefix_space)


@dataclass(frozen=True)
class TemplateProcessing:
    """Special tokens around one text or a pair, each part with its type id.

    `single` and `pair` hold (name, type id): "$A" and "$B" for the texts, anything else a special
    token. `special_tokens` holds tokenizers' map, sorted by key, as (key, id, ids, tokens); the
    ones the template names must be one token each (tokkit supports no other).

    >>> t = TemplateProcessing(single=(("$A", 0), ("</s>", 0)), pair=(("$A", 0), ("</s>", 0), ("$B", 1), ("</s>", 1)),
    ...                        special_tokens=(("</s>", "</s>", (1,), ("</s>",)),))
    >>> t.to_json()["single"]
    [{'Sequence': {'id': 'A', 'type_id': 0}}, {'SpecialToken': {'id': '</s>', 'type_id': 0}}]
    """

    single: tuple[Part, ...]
    pair: tuple[Part, ...]
    special_tokens: tuple[tuple[str, str, tuple[int, ...], tuple[str, ...]], ...] = ()

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "TemplateProcessing":
        at = f"{where}: post_processor.TemplateProcessing"
        specials = json_field(obj, "special_tokens", (dict,), at)
        return cls(single=_parts(json_field(obj, "single", (list,), at), ("$A",), at, "single"),
                   pair=_parts(json_field(obj, "pair", (list,), at), ("$A", "$B"), at, "pair"),
                   special_tokens=tuple(_special(key, specials[key], at) for key in sorted(specials)))

    def to_json(self) -> dict:
        return {"type": "TemplateProcessing", "single": [_part_json(*p) for p in self.single],
                "pair": [_part_json(*p) for p in self.pair],
                "special_tokens": {key: {"id": tid, "ids": list(ids), "tokens": list(toks)}
                                   for key, tid, ids, toks in self.special_tokens}}

    def template(self) -> Template:
        """The template, each special token it names with the one id its entry gives (looked up by
        key, as tokenizers does; the id need not be the vocabulary's)."""
        entries = {key: (ids, toks) for key, _, ids, toks in self.special_tokens}
        ids = []
        for name in Template(self.single, self.pair).tokens():
            if name not in entries:
                raise TokkitError(f"post_processor.special_tokens[{name!r}] is missing, and the template names it")
            if len(entries[name][0]) != 1 or len(entries[name][1]) != 1:
                raise TokkitError(f"post_processor.special_tokens[{name!r}] must hold one token and its id (tokkit "
                                  f"supports no other), got ids {list(entries[name][0])}")
            ids.append((name, entries[name][0][0]))
        return Template(single=self.single, pair=self.pair, ids=tuple(ids))


def _parts(items: list, sequences: tuple[str, ...], where: str, field: str) -> tuple[Part, ...]:
    """A template's parts as (name, type id), each of `sequences` exactly once."""
    parts = tuple(_part(item, f"{where}: {field}[{k}]") for k, item in enumerate(items))
    names = [name for name, _ in parts]
    if sorted(n for n in names if n in SEQUENCES) != list(sequences):
        raise TokkitError(f"{where}: field '{field}' must hold {' and '.join(sequences)} exactly once each "
                          f"(tokkit supports no other template), got {' '.join(names)!r}")
    return parts


def _part(item, where: str) -> Part:
    body = next(iter(item.values())) if isinstance(item, dict) and len(item) == 1 else None
    kind = next(iter(item)) if body is not None else None
    if kind not in ("SpecialToken", "Sequence") or not isinstance(body, dict) or not isinstance(body.get("id"), str):
        raise TokkitError(f"{where}: must be {{\"SpecialToken\" or \"Sequence\": {{\"id\": ..., \"type_id\": N}}}}, "
                          f"got {item!r}"[:300])
    type_id = body.get("type_id")
    if not isinstance(type_id, int) or isinstance(type_id, bool) or not 0 <= type_id < TYPE_IDS:
        raise TokkitError(f"{where}: type_id must be an integer from 0 to {TYPE_IDS - 1}, got {type_id!r}")
    if kind == "Sequence":
        if body["id"] not in ("A", "B"):
            raise TokkitError(f"{where}: a Sequence id must be \"A\" or \"B\", got {body['id']!r}")
        return "$" + body["id"], type_id
    if body["id"] in SEQUENCES:
        raise TokkitError(f"{where}: a special token cannot be named {body['id']!r}")
    return body["id"], type_id


def _part_json(name: str, type_id: int) -> dict:
    if name in SEQUENCES:
        return {"Sequence": {"id": name[1:], "type_id": type_id}}
    return {"SpecialToken": {"id": name, "type_id": type_id}}


def _special(key: str, entry, where: str) -> tuple[str, str, tuple[int, ...], tuple[str, ...]]:
    at = f"{where}: special_tokens[{key!r}]"
    json_object(entry, at)
    ids, toks = json_field(entry, "ids", (list,), at), json_field(entry, "tokens", (list,), at)
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < TYPE_IDS for i in ids) \
            or not all(isinstance(t, str) for t in toks):
        raise TokkitError(f"{at}: 'ids' must be integers from 0 to {TYPE_IDS - 1} and 'tokens' strings")
    return key, json_field(entry, "id", (str,), at), tuple(ids), tuple(toks)


@dataclass(frozen=True)
class PostSequence:
    """tokenizers' Sequence post-processor: the processors in turn (Llama 3: ByteLevel, then a template).

    tokkit runs at most one processor that adds special tokens and at most one that trims offsets,
    the trimming first.

    >>> seq = post_from_json({"type": "Sequence", "processors": [
    ...     {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
    ...     {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
    ...      {"Sequence": {"id": "A", "type_id": 0}}], "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
    ...      {"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
    ...      "special_tokens": {"<s>": {"id": "<s>", "ids": [7], "tokens": ["<s>"]}}}]}, "t.json")
    >>> t = post_template(seq, "t.json")
    >>> t.single, t.trim_offsets, t.add_prefix_space
    ((('<s>', 0), ('$A', 0)), False, True)
    """

    processors: tuple

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "PostSequence":
        at = f"{where}: post_processor.Sequence"
        if json_field(obj, "type", (str,), at) != "Sequence":
            raise TokkitError(f"{at}: field 'type' must be 'Sequence', got {obj['type']!r}")
        items = json_field(obj, "processors", (list,), at)
        return cls(tuple(post_from_json(json_object(item, f"{at}.processors[{k}]"), f"{at}.processors[{k}]")
                         for k, item in enumerate(items)))

    def to_json(self) -> dict:
        return {"type": "Sequence", "processors": [p.to_json() for p in self.processors]}

    def flat(self) -> list:
        """The processors in the order they run, nested Sequences opened."""
        return [q for p in self.processors for q in (p.flat() if isinstance(p, PostSequence) else [p])]

    def template(self) -> Template:
        steps = self.flat()
        adders = [p for p in steps if not isinstance(p, PostByteLevel)]
        trimmers = [p for p in steps if getattr(p, "trim_offsets", False)]
        if len(adders) > 1 or len(trimmers) > 1:
            raise TokkitError("post_processor.Sequence: tokkit supports at most one processor that adds special "
                              "tokens and at most one that trims offsets")
        if trimmers and adders and steps.index(trimmers[0]) > steps.index(adders[0]):
            raise TokkitError("post_processor.Sequence: a ByteLevel that trims offsets must come before the template")
        base = adders[0].template() if adders else PostByteLevel().template()
        spaces = trimmers[0] if trimmers else next((p for p in steps if hasattr(p, "add_prefix_space")), None)
        return Template(single=base.single, pair=base.pair, trim_offsets=bool(trimmers),
                        add_prefix_space=bool(spaces and spaces.add_prefix_space), ids=base.ids)



PostProcessor = Union[BertProcessing, RobertaProcessing, PostByteLevel, TemplateProcessing, PostSequence]
# tokenizers tries these in this order and keeps the first that reads: "type" decides only ByteLevel and Sequence.
_ORDER = (RobertaProcessing, BertProcessing, PostByteLevel, TemplateProcessing, PostSequence)
_BY_TYPE = dict(zip(("RobertaProcessing", "BertProcessing", "ByteLevel", "TemplateProcessing", "Sequence"), _ORDER))


def post_from_json(obj: dict | None, where: str) -> PostProcessor | None:
    """The post-processor component a `post_processor` object describes (None for null)."""
    if obj is None:
        return None
    json_object(obj, f"{where}: post_processor")
    errors = {}
    for cls in _ORDER:
        try:
            return cls.from_json(obj, where)
        except TokkitError as exc:
            errors[cls] = exc
    named = _BY_TYPE.get(obj.get("type"))
    if named is not None:
        raise errors[named]
    raise TokkitError(f"{where}: post_processor type {obj.get('type')!r} is not supported ({', '.join(STYLES)} "
                      f"or null), and its fields match none of them")


def post_to_json(post: PostProcessor | None) -> dict | None:
    """The `post_processor` object as tokenizers writes it."""
    return None if post is None else post.to_json()


def post_template(post: PostProcessor | None, where: str) -> Template | None:
    """The Template the encoder runs for `post` (None for none), its special tokens with the ids the
    post-processor gives them: tokenizers writes those, whatever the vocabulary holds."""
    if post is None:
        return None
    try:
        return post.template()
    except TokkitError as exc:
        raise TokkitError(f"{where}: {exc}") from None
