"""tokenizer.json in the `tokenizers` schema (read and write), plus transformers' side files.

Only the parts tokkit implements are accepted; anything else is an error naming the field.

>>> from tokkit.text.normalize import BertNorm
>>> from tokkit.tokenizer.spec import AddedToken, Spec
>>> spec = Spec(kind="wordpiece", vocab=["[UNK]", "a"], merges=None, added=[AddedToken(0, "[UNK]")],
...             unk_token="[UNK]", normalizer=BertNorm())
>>> spec_from_json(to_json(spec), "x").vocab
['[UNK]', 'a']
"""
from __future__ import annotations

from dataclasses import replace

from tokkit.errors import TokkitError
from tokkit.text.normalize import BertNorm
from tokkit.text.pretokenize import GPT2_PATTERN
from tokkit.tokenizer.decoders import decoder_from_json, decoder_to_json
from tokkit.tokenizer.files import MAX_TOKEN_CHARS
from tokkit.tokenizer.models import BPE, Unigram, WordLevel, WordPiece, model_from_json, model_to_json
from tokkit.tokenizer.normalizers import normalizer_from_json, normalizer_to_json
from tokkit.tokenizer.post import post_json, read_post
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
    """Build a Spec from a parsed tokenizer.json: its components, then a fast encode path's form when
    the components are exactly what one covers (BERT WordPiece, char BPE, GPT-2-style byte-level)."""
    spec = read_spec(data, where)
    return fast_form(spec, where) or spec


def read_spec(data: dict, where: str) -> Spec:
    """A Spec holding a parsed tokenizer.json's components (`pipeline`), before any fast form."""
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise TokkitError(f"{where}: not a tokenizer.json (no 'model' object)")
    pipeline = read_pipeline(data, where)
    vocab = model_vocab(pipeline.model)
    if isinstance(pipeline.model, Unigram) and max(map(len, vocab), default=0) > MAX_TOKEN_CHARS:
        # the lattice walk keeps every prefix of every piece: a long piece would cost its length squared
        raise TokkitError(f"{where}: model.Unigram: a piece of {max(map(len, vocab)):,} characters; tokkit reads "
                          f"pieces of at most {MAX_TOKEN_CHARS:,} (tokkit.tokenizer.files.MAX_TOKEN_CHARS)")
    added = _added_tokens(_field(data, "added_tokens", (list, type(None)), None, where) or [], vocab, where)
    spec = Spec(kind=pipeline_kind(pipeline), vocab=vocab, merges=None, added=added, pipeline=pipeline)
    for key in ("truncation", "padding"):  # kept as the defaults of tokkit.encode, written back on save
        value = _field(data, key, (dict, type(None)), None, where)
        if value is not None:
            encode_defaults({key: value}, where)  # checked now, so a bad file fails at load
            spec.extra[key] = value
    spec.post = read_post(_field(data, "post_processor", (dict, type(None)), None, where), where)
    _check_template_room(spec, where)
    if spec.post is not None:  # an id only the template writes is still one tokkit emits
        spec.vocab.extend([None] * (1 + max((i for _, i in spec.post.ids), default=-1) - len(spec.vocab)))
    return spec


def _check_template_room(spec: Spec, where: str) -> None:
    """Type ids tokkit.encode's int32 arrays hold, and a truncation stride below the room the template
    leaves (tokenizers fails on every truncating encode past it)."""
    if spec.post is None:
        return
    if max(t for _, t in spec.post.single + spec.post.pair) > I32:
        raise TokkitError(f"{where}: post_processor type ids above {I32} are not supported "
                          "(tokkit.encode's token_type_ids are int32)")
    trunc = spec.extra.get("truncation")
    if trunc is not None:
        room = trunc["max_length"] - spec.post.specials(pair=True)
        if trunc.get("stride", 0) >= room:
            raise TokkitError(f"{where}: truncation.stride ({trunc.get('stride', 0)}) must be below "
                              f"truncation.max_length minus the template's special tokens ({room})")


def read_pipeline(data: dict, where: str) -> Pipeline:
    """The normalizer, pre-tokenizer, model and decoder of a tokenizer.json, each read by its family."""
    return Pipeline(
        normalizer=normalizer_from_json(_field(data, "normalizer", (dict, type(None)), None, where), where),
        pre_tokenizer=pre_tokenizer_from_json(_field(data, "pre_tokenizer", (dict, type(None)), None, where), where),
        model=model_from_json(data["model"], where),
        decoder=decoder_from_json(_field(data, "decoder", (dict, type(None)), None, where), where))


def model_vocab(model) -> list[str | None]:
    """The model's tokens in id order (a Unigram's pieces without their scores; None at an unused id)."""
    if isinstance(model, Unigram):
        return [piece for piece, _ in model.vocab]
    return list(model.vocab)


def pipeline_kind(pipeline: Pipeline) -> str:
    """"unigram", "wordlevel", "wordpiece", "bytelevel" (a BPE over GPT-2 byte symbols) or "bpe"."""
    model = pipeline.model
    if isinstance(model, BPE):
        parts = (pre_tokenizer_to_json(pipeline.pre_tokenizer), decoder_to_json(pipeline.decoder))
        return "bytelevel" if any('"ByteLevel"' in str(part).replace("'", '"') for part in parts) else "bpe"
    return {Unigram: "unigram", WordLevel: "wordlevel", WordPiece: "wordpiece"}[type(model)]


def fast_form(spec: Spec, where: str) -> Spec | None:
    """`spec` in the form of a fast encode path (no `pipeline`), or None when no fast path covers it."""
    p = spec.pipeline
    own = model_vocab(p.model)
    if not all(a.plain and a.id < len(own) and own[a.id] == a.content for a in spec.added):
        return None  # flags, or tokens outside the model's vocabulary (the fast paths would let the model make them)
    norm = normalizer_to_json(p.normalizer)
    pre = pre_tokenizer_to_json(p.pre_tokenizer)
    dec = decoder_to_json(p.decoder) or {}
    bert = norm is None or norm.get("type") == "BertNormalizer"
    model = p.model
    fast = replace(spec, pipeline=None, normalizer=_bert_norm(norm))
    if isinstance(model, WordPiece):
        if not (bert and pre == {"type": "BertPreTokenizer"} and dec.get("type") == "WordPiece"
                and dec.get("prefix") == model.continuing_subword_prefix):
            return None
        if max(len(t) for t in spec.vocab if t) > MAX_TOKEN_CHARS:
            return None  # the fast path keeps every prefix of every token: quadratic in a long token
        return replace(fast, kind="wordpiece", unk_token=model.unk_token, prefix=model.continuing_subword_prefix,
                       max_input_chars_per_word=model.max_input_chars_per_word, decoder_cleanup=dec["cleanup"])
    if not isinstance(model, BPE) or model.byte_fallback or model.fuse_unk \
            or model.dropout or model.continuing_subword_prefix or model.unk_token not in (None, *spec.vocab):
        return None
    fast = replace(fast, merges=list(model.merges), unk_token=model.unk_token, suffix=model.end_of_word_suffix or None)
    if model.ignore_merges and pre == {"type": "BertPreTokenizer"}:
        return None
    if pre == {"type": "BertPreTokenizer"}:
        if bert and dec.get("type") == "BPEDecoder" and dec.get("suffix") == (fast.suffix or "</w>"):
            return replace(fast, kind="bpe")
        return None
    pattern = _bytelevel_pattern(pre)
    if norm not in (None, {"type": "NFC"}) or fast.suffix is not None or pattern is None \
            or dec.get("type") != "ByteLevel":
        return None
    fast = replace(fast, kind="bytelevel", normalizer=None, pattern=pattern[0], add_prefix_space=pattern[1],
                   nfc=norm is not None, ignore_merges=model.ignore_merges, source=p)
    if fast.add_prefix_space and any(a.content.startswith(" ") for a in spec.added):
        return None  # the space put before the text after such a token would let it match where it did not
    return fast


def _bert_norm(norm: dict | None) -> BertNorm | None:
    if norm is None or norm.get("type") != "BertNormalizer":
        return None
    return BertNorm(clean_text=norm["clean_text"], handle_chinese_chars=norm["handle_chinese_chars"],
                    strip_accents=norm["strip_accents"], lowercase=norm["lowercase"])


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


def _added_tokens(entries: list, vocab: list[str | None], where: str) -> list[AddedToken]:
    """The added tokens with their flags and the ids tokenizers gives them; `vocab` (the model's tokens
    by id) gets each one that is not a model token at its id.

    tokenizers ignores the ids the file writes: a model token keeps its model id, any other takes the
    next id past the model's vocabulary (past its count of tokens, or past the last added id beyond it).
    A token listed again replaces the first listing (flags included) at the first one's id.
    """
    model_ids = {tok: i for i, tok in enumerate(vocab) if tok is not None}
    count = len(model_ids)
    added: dict[str, AddedToken] = {}
    for i, entry in enumerate(entries):
        name = f"{where}: added_tokens[{i}]"
        _typed(entry, (dict,), where, f"added_tokens[{i}]")
        flags = {key: _field(entry, key, (bool,), False, where, f"added_tokens[{i}].")
                 for key in ("single_word", "lstrip", "rstrip", "normalized")}
        special = _field(entry, "special", (bool,), True, where, f"added_tokens[{i}].")
        idx, content = entry.get("id"), entry.get("content")
        if not isinstance(idx, int) or isinstance(idx, bool) or not isinstance(content, str) or not content:
            raise TokkitError(f"{name}: needs an integer 'id' and a non-empty 'content'")
        known = added[content].id if content in added else model_ids.get(content)
        if known is None:
            top = max((a.id for a in added.values()), default=None)
            known = count if top is None or top < count else top + 1
        added[content] = AddedToken(known, content, special, **flags)
    for token in added.values():
        vocab.extend([None] * (token.id + 1 - len(vocab)))
        vocab[token.id] = token.content
    return sorted(added.values(), key=lambda a: a.id)


def _bytelevel_pattern(pre) -> tuple[str | None, bool] | None:
    """(Split pattern or None for GPT-2's, add_prefix_space) of the byte-level pre-tokenizers the fast
    path runs, or None for any other pre-tokenizer."""
    def is_bytelevel(p, use_regex, prefix=(False,)):
        return (isinstance(p, dict) and p.get("type") == "ByteLevel" and p.get("use_regex", True) == use_regex
                and p.get("add_prefix_space", True) in prefix)

    if is_bytelevel(pre, True, (False, True)):
        return None, pre.get("add_prefix_space", True)
    if (isinstance(pre, dict) and pre.get("type") == "Sequence" and len(pre.get("pretokenizers", [])) == 2
            and is_bytelevel(pre["pretokenizers"][1], False)):
        split = pre["pretokenizers"][0]
        if (split.get("type") == "Split" and "Regex" in split.get("pattern", {})
                and split.get("behavior") == "Isolated" and not split.get("invert", False)):
            pattern = split["pattern"]["Regex"]
            return (None if pattern == GPT2_PATTERN else pattern), False
    return None


# ---------------------------------------------------------------------------------------- writing
def to_json(spec: Spec) -> dict:
    """The tokenizer.json object for `spec`, keys in the order tokenizers writes them."""
    if spec.pipeline is not None:
        return pipeline_json(spec)
    ids = spec.token_ids()
    out: dict = {"version": "1.0", "truncation": spec.extra.get("truncation"), "padding": spec.extra.get("padding"),
                 "added_tokens": [
        added_json(a) for a in spec.added]}
    n = spec.normalizer
    out["normalizer"] = {"type": "NFC"} if spec.nfc else None if n is None else {
        "type": "BertNormalizer", "clean_text": n.clean_text, "handle_chinese_chars": n.handle_chinese_chars,
        "strip_accents": n.strip_accents, "lowercase": n.lowercase}
    bytelevel = {"type": "ByteLevel", "add_prefix_space": spec.add_prefix_space, "trim_offsets": True,
                 "use_regex": True}
    if spec.kind != "bytelevel":
        out["pre_tokenizer"] = {"type": "BertPreTokenizer"}
    elif spec.pattern is None:
        out["pre_tokenizer"] = bytelevel
    else:
        out["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": spec.pattern}, "behavior": "Isolated", "invert": False},
            dict(bytelevel, use_regex=False)]}
    out["post_processor"] = post_json(spec.post)
    if spec.kind == "wordpiece":
        out["decoder"] = {"type": "WordPiece", "prefix": spec.prefix, "cleanup": spec.decoder_cleanup}
        out["model"] = {"type": "WordPiece", "unk_token": spec.unk_token, "continuing_subword_prefix": spec.prefix,
                        "max_input_chars_per_word": spec.max_input_chars_per_word, "vocab": ids}
    else:
        out["decoder"] = ({"type": "BPEDecoder", "suffix": spec.suffix or "</w>"} if spec.kind == "bpe"
                          else bytelevel)
        out["model"] = {"type": "BPE", "dropout": None, "unk_token": spec.unk_token,
                        "continuing_subword_prefix": None, "end_of_word_suffix": spec.suffix, "fuse_unk": False,
                        "byte_fallback": False, "ignore_merges": spec.ignore_merges, "vocab": ids,
                        "merges": [[a, b] for a, b in spec.merges or ()]}
    return out


def added_json(a: AddedToken) -> dict:
    return {"id": a.id, "content": a.content, "single_word": a.single_word, "lstrip": a.lstrip, "rstrip": a.rstrip,
            "normalized": a.normalized, "special": a.special}


def pipeline_json(spec: Spec) -> dict:
    """tokenizer.json of a spec read from components: each component written back as it was read."""
    p = spec.pipeline
    return {"version": "1.0", "truncation": spec.extra.get("truncation"), "padding": spec.extra.get("padding"),
            "added_tokens": [added_json(a) for a in spec.added],
            "normalizer": normalizer_to_json(p.normalizer), "pre_tokenizer": pre_tokenizer_to_json(p.pre_tokenizer),
            "post_processor": post_json(spec.post), "decoder": decoder_to_json(p.decoder),
            "model": model_to_json(p.model)}


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
    lowercase = spec.normalizer.lowercase if spec.normalizer else False
    out = {"tokenizer_class": "BertTokenizer" if spec.kind == "wordpiece" and spec.post else "PreTrainedTokenizerFast",
           "do_lower_case": lowercase, "model_max_length": spec.model_max_length,
           "clean_up_tokenization_spaces": False,
           "model_input_names": ["input_ids", "token_type_ids", "attention_mask"]}
    if spec.kind == "wordpiece" and spec.normalizer is not None:
        out["strip_accents"] = spec.normalizer.strip_accents
        out["tokenize_chinese_chars"] = spec.normalizer.handle_chinese_chars
    out.update(special_tokens_map(spec))
    return out
