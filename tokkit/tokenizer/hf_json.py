"""tokenizer.json in the `tokenizers` schema, read into components and written from them, plus
transformers' side files.

Only the parts tokkit implements are accepted; anything else is an error naming the field. Each
component is written back as it was read (tokenizers' key order), so a file round-trips.

>>> from tokkit.tokenizer.recipes import wordpiece_spec
>>> spec = wordpiece_spec(["[UNK]", "a"], ["[UNK]"])
>>> spec_from_json(to_json(spec), "x") == spec
True
>>> to_json(spec)["model"]["vocab"]
{'[UNK]': 0, 'a': 1}
"""
from __future__ import annotations

import json
import re
from dataclasses import fields

from tokkit.errors import TokkitError
from tokkit.tokenizer.aligned import aligned
from tokkit.tokenizer.component_json import check_depth
from tokkit.tokenizer.decoders import decoder_from_json, decoder_to_json
from tokkit.tokenizer.files import MAX_TOKEN_CHARS
from tokkit.tokenizer.models import Unigram, model_from_json, model_to_json
from tokkit.tokenizer.normalizers import BertNormalizer, normalizer_from_json, normalizer_to_json
from tokkit.tokenizer.post import post_from_json, post_template, post_to_json
from tokkit.tokenizer.pre_tokenizers import pre_tokenizer_from_json, pre_tokenizer_to_json
from tokkit.tokenizer.spec import AddedToken, Pipeline, Spec

SPECIAL_NAMES = {"[UNK]": "unk_token", "[SEP]": "sep_token", "[PAD]": "pad_token",
                 "[CLS]": "cls_token", "[MASK]": "mask_token", "<unk>": "unk_token", "<pad>": "pad_token",
                 "<s>": "bos_token", "</s>": "eos_token", "<mask>": "mask_token"}


_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", bool: "true or false",
               type(None): "null", float: "a number"}


def _typed(value, types: tuple, where: str, field: str):
    """`value` when it is one of `types` (bool is not an int here), else a TokkitError naming the field."""
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not ok:
        want = " or ".join(_TYPE_NAMES[t] for t in types)
        raise TokkitError(f"{where}: field '{field}' must be {want}, got {_TYPE_NAMES.get(type(value), type(value).__name__)}")
    return value


def _field(obj: dict, key: str, types: tuple, default, where: str, prefix: str = ""):
    return _typed(obj.get(key, default), types, where, prefix + key)


# ---------------------------------------------------------------------------------------- reading
def spec_from_json(data: dict, where: str) -> Spec:
    """A Spec holding a parsed tokenizer.json's components, its added tokens and encode defaults."""
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise TokkitError(f"{where}: not a tokenizer.json (no 'model' object)")
    pipeline = read_pipeline(data, where)
    tokens = pipeline.model.tokens
    if isinstance(pipeline.model, Unigram) and max(map(len, tokens), default=0) > MAX_TOKEN_CHARS:
        # the lattice walk keeps every prefix of every piece: a long piece would cost its length squared
        raise TokkitError(f"{where}: model.Unigram: a piece of {max(map(len, tokens)):,} characters; tokkit reads "
                          f"pieces of at most {MAX_TOKEN_CHARS:,} (tokkit.tokenizer.files.MAX_TOKEN_CHARS)")
    added = _added_tokens(_field(data, "added_tokens", (list, type(None)), None, where) or [], pipeline.model.ids,
                          where)
    _check_normalized_forms(added, pipeline.normalizer, where)
    extra = {}
    for key in ("truncation", "padding"):  # kept as the defaults of tokkit.encode, written back on save
        value = _field(data, key, (dict, type(None)), None, where)
        if value is not None:
            encode_defaults({key: value}, where)  # checked now, so a bad file fails at load
            extra[key] = value
    spec = Spec(pipeline, added, extra=extra)
    _check_template_room(spec, where)
    return spec


def _check_template_room(spec: Spec, where: str) -> None:
    """A template tokkit can lay out: type ids tokkit.encode's int32 arrays hold, and a truncation
    stride below the room the template leaves (tokenizers fails on every truncating encode past it)."""
    template = post_template(spec.pipeline.post, where)
    if template is None:
        return
    if max(t for _, t in template.single + template.pair) > I32:
        raise TokkitError(f"{where}: post_processor type ids above {I32} are not supported "
                          "(tokkit.encode's token_type_ids are int32)")
    trunc = spec.extra.get("truncation")
    if trunc is not None:
        room = trunc["max_length"] - template.specials(pair=True)
        if trunc.get("stride", 0) >= room:
            raise TokkitError(f"{where}: truncation.stride ({trunc.get('stride', 0)}) must be below "
                              f"truncation.max_length minus the template's special tokens ({room})")


def read_pipeline(data: dict, where: str) -> Pipeline:
    """The components of a tokenizer.json, each read by its family."""
    def part(key: str):
        value = _field(data, key, (dict, type(None)), None, where)
        check_depth(value, where, key)
        return value

    return Pipeline(normalizer=normalizer_from_json(part("normalizer"), where),
                    pre_tokenizer=pre_tokenizer_from_json(part("pre_tokenizer"), where),
                    model=model_from_json(data["model"], where), post=post_from_json(part("post_processor"), where),
                    decoder=decoder_from_json(part("decoder"), where))


_STRATEGIES = {"LongestFirst": "longest_first", "OnlyFirst": "only_first", "OnlySecond": "only_second"}


def encode_defaults(extra: dict, where: str = "tokenizer.json") -> dict:
    """tokkit.encode's defaults from a tokenizer.json's `truncation` and `padding` (as Hub folders set them).

    >>> encode_defaults({"truncation": {"max_length": 128, "strategy": "LongestFirst", "stride": 0,
    ...                                 "direction": "Right"},
    ...                  "padding": {"strategy": {"Fixed": 128}, "direction": "Right", "pad_to_multiple_of": None,
    ...                              "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"}})
    {'max_length': 128, 'truncation': 'longest_first', 'stride': 0, 'padding': 'max_length', 'padding_side': 'right', 'pad_to_multiple_of': None}
    """
    out: dict = {}
    trunc = extra.get("truncation")
    if trunc is not None:
        max_length = _sized(trunc, "max_length", None, 1, U64, where, "truncation.")
        strategy = _field(trunc, "strategy", (str,), "LongestFirst", where, "truncation.")
        if strategy not in _STRATEGIES:
            raise TokkitError(f"{where}: truncation.strategy {strategy!r} is not one of {', '.join(_STRATEGIES)}")
        if _field(trunc, "direction", (str,), "Right", where, "truncation.") != "Right":
            raise TokkitError(f"{where}: truncation.direction must be 'Right' (tokkit truncates at the end)")
        stride = _sized(trunc, "stride", 0, 0, U64, where, "truncation.")
        if stride >= max_length:  # tokenizers fails on every encode that truncates
            raise TokkitError(f"{where}: truncation.stride ({stride}) must be below truncation.max_length ({max_length})")
        out.update(max_length=max_length, truncation=_STRATEGIES[strategy], stride=stride)
    pad = extra.get("padding")
    if pad is not None:
        strategy = pad.get("strategy", "BatchLongest")
        if strategy == "BatchLongest":
            out["padding"] = "longest"
        elif isinstance(strategy, dict) and set(strategy) == {"Fixed"}:
            out["padding"] = "max_length"
            # padded rows are allocated whole: a length past int32 is no length tokkit can fill
            out.setdefault("max_length", _sized(strategy, "Fixed", None, 1, I32, where, "padding.strategy."))
        else:
            raise TokkitError(f"{where}: padding.strategy must be \"BatchLongest\" or {{\"Fixed\": N}}, got {strategy!r}")
        direction = _field(pad, "direction", (str,), "Right", where, "padding.")
        if direction not in ("Right", "Left"):
            raise TokkitError(f"{where}: padding.direction must be 'Right' or 'Left'")
        out["padding_side"] = direction.lower()
        multiple = _field(pad, "pad_to_multiple_of", (int, type(None)), None, where, "padding.")
        if multiple is not None:
            multiple = _sized(pad, "pad_to_multiple_of", None, 0, I32, where, "padding.") or None  # 0: none
        out["pad_to_multiple_of"] = multiple
        for key in ("pad_id", "pad_type_id"):  # token and type ids are int32 arrays in tokkit.encode
            _sized(pad, key, 0, 0, I32, where, "padding.")
    return out


U64, I32 = 2**64 - 1, 2**31 - 1


def _sized(obj: dict, key: str, default, low: int, high: int, where: str, prefix: str) -> int:
    """An integer field within [low, high] (what tokenizers reads as usize, or what int32 arrays hold)."""
    value = _field(obj, key, (int,), default, where, prefix)
    if not low <= value <= high:
        raise TokkitError(f"{where}: field '{prefix}{key}' must be an integer from {low} to {high}, got {value}")
    return value


def _added_tokens(entries: list, model_ids: dict[str, int], where: str) -> tuple[AddedToken, ...]:
    """The added tokens with their flags and the ids tokenizers gives them (`model_ids`: the model's token -> id).

    tokenizers ignores the ids the file writes: a model token keeps its model id, any other takes the
    next id past the model's vocabulary (past its count of tokens, or past the last added id beyond it).
    A token listed again replaces the first listing (flags included) at the first one's id.
    """
    count = len(model_ids)
    added: dict[str, AddedToken] = {}
    top = -1  # the highest id given so far (kept as it goes: a max over `added` each time is quadratic)
    for i, entry in enumerate(entries):
        flags, special = _added_flags(entry, i, where)
        idx, content = entry.get("id"), entry.get("content")
        if not isinstance(idx, int) or isinstance(idx, bool) or not isinstance(content, str) or not content:
            raise TokkitError(f"{where}: added_tokens[{i}]: needs an integer 'id' and a non-empty 'content'")
        known = added[content].id if content in added else model_ids.get(content)
        if known is None:
            known = count if top < count else top + 1
        added[content] = AddedToken(known, content, special, **flags)
        top = max(top, known)
    return tuple(sorted(added.values(), key=lambda a: a.id))


_ADDED_FLAGS = ("single_word", "lstrip", "rstrip", "normalized")
_FALSES = (False,) * len(_ADDED_FLAGS)


def _added_flags(entry, i: int, where: str) -> tuple[dict, bool]:
    """An added_tokens entry's flags and `special` (checked in one pass: Gemma 3 lists 6k entries; the
    field-by-field checks run only to name what is wrong).

    >>> _added_flags({"lstrip": True}, 0, "t.json")
    ({'single_word': False, 'lstrip': True, 'rstrip': False, 'normalized': False}, True)
    >>> _added_flags({"special": 1}, 3, "t.json")
    Traceback (most recent call last):
    tokkit.errors.TokkitError: t.json: field 'added_tokens[3].special' must be true or false, got an integer
    """
    if type(entry) is dict:
        values = tuple(map(entry.get, _ADDED_FLAGS, _FALSES))
        special = entry.get("special", True)
        if {type(special), *map(type, values)} == {bool}:
            return dict(zip(_ADDED_FLAGS, values)), special
    _typed(entry, (dict,), where, f"added_tokens[{i}]")
    flags = {key: _field(entry, key, (bool,), False, where, f"added_tokens[{i}].") for key in _ADDED_FLAGS}
    return flags, _field(entry, "special", (bool,), True, where, f"added_tokens[{i}].")


def _check_normalized_forms(added: tuple[AddedToken, ...], normalizer, where: str) -> None:
    """A `normalized` added token is matched in its normalized form; one the normalizer deletes has
    none (tokenizers then matches the empty string between every two bytes, and fails on any text
    that is not ASCII)."""
    if normalizer is None:
        return
    for a in added:
        if a.normalized and not normalizer.normalize(aligned(a.content))[0]:
            raise TokkitError(f"{where}: added token {a.content!r} (id {a.id}) is normalized, and the normalizer "
                              "turns it into nothing: it could never match")


_SURROGATE = re.compile("[\ud800-\udfff]")


def refuse_lone_surrogates(spec: Spec, where: str) -> None:
    """Every string a tokenizer holds is text: JSON can spell a lone surrogate as a \\uD800 escape,
    which tokenizers refuses to read and UTF-8 cannot write (saving the tokenizer would fail)."""
    p = spec.pipeline
    model_strings = [getattr(p.model, f.name) for f in fields(p.model)]
    parts = {"vocabulary": "\n".join(filter(None, spec.vocab)),
             "model": "\n".join(v for v in model_strings if isinstance(v, str)),
             **{key: json.dumps(write(part), ensure_ascii=False) for key, write, part in (
                 ("normalizer", normalizer_to_json, p.normalizer), ("pre_tokenizer", pre_tokenizer_to_json,
                                                                    p.pre_tokenizer),
                 ("post_processor", post_to_json, p.post), ("decoder", decoder_to_json, p.decoder))}}
    for name, text in parts.items():
        found = _SURROGATE.search(text)
        if found:
            line = text[text.rfind("\n", 0, found.start()) + 1:text.find("\n", found.start()) % (len(text) + 1)]
            raise TokkitError(f"{where}: the {name} holds a lone surrogate (U+{ord(found.group()):04X}, in "
                              f"{line[:80]!r}), which is no text: tokenizers refuses it and it cannot be saved")


# ---------------------------------------------------------------------------------------- writing
def to_json(spec: Spec) -> dict:
    """The tokenizer.json object for `spec`, keys in the order tokenizers writes them."""
    p = spec.pipeline
    return {"version": "1.0", "truncation": spec.extra.get("truncation"), "padding": spec.extra.get("padding"),
            "added_tokens": [added_json(a) for a in spec.added],
            "normalizer": normalizer_to_json(p.normalizer), "pre_tokenizer": pre_tokenizer_to_json(p.pre_tokenizer),
            "post_processor": post_to_json(p.post), "decoder": decoder_to_json(p.decoder),
            "model": model_to_json(p.model)}


def added_json(a: AddedToken) -> dict:
    return {"id": a.id, "content": a.content, "single_word": a.single_word, "lstrip": a.lstrip, "rstrip": a.rstrip,
            "normalized": a.normalized, "special": a.special}


def special_tokens_map(spec: Spec) -> dict:
    """transformers' special_tokens_map.json: the BERT names, other specials as additional."""
    out: dict = {}
    extra = []
    for a in spec.added:
        if a.content in SPECIAL_NAMES:
            out[SPECIAL_NAMES[a.content]] = a.content
        elif a.special:
            extra.append(a.content)
    if extra:
        out["additional_special_tokens"] = extra
    return dict(sorted(out.items()))


def tokenizer_config(spec: Spec) -> dict:
    """transformers' tokenizer_config.json, enough for AutoTokenizer.from_pretrained(dir)."""
    bert = spec.pipeline.normalizer if isinstance(spec.pipeline.normalizer, BertNormalizer) else None
    wordpiece = spec.kind == "wordpiece"
    out = {"tokenizer_class": "BertTokenizer" if wordpiece and spec.pipeline.post else "PreTrainedTokenizerFast",
           "do_lower_case": bert.lowercase if bert else False, "model_max_length": spec.model_max_length,
           "clean_up_tokenization_spaces": False,
           "model_input_names": ["input_ids", "token_type_ids", "attention_mask"]}
    if wordpiece and bert is not None:
        out["strip_accents"] = bert.strip_accents
        out["tokenize_chinese_chars"] = bert.handle_chinese_chars
    out.update(special_tokens_map(spec))
    return out
