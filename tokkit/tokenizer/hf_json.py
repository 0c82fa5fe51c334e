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

import regex

from tokkit.errors import TokkitError
from tokkit.text.normalize import BertNorm
from tokkit.text.pretokenize import GPT2_PATTERN
from tokkit.tokenizer.post import post_json, read_post
from tokkit.tokenizer.spec import AddedToken, Spec, check_merge, vocab_from_mapping

SPECIAL_NAMES = {"[UNK]": "unk_token", "[SEP]": "sep_token", "[PAD]": "pad_token",
                 "[CLS]": "cls_token", "[MASK]": "mask_token"}


MAX_WORD_CHARS = 1 << 20  # max_input_chars_per_word beyond this would only make huge words slow

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
    """Build a Spec from a parsed tokenizer.json."""
    if not isinstance(data, dict) or "model" not in data:
        raise TokkitError(f"{where}: not a tokenizer.json (no 'model')")
    model = _field(data, "model", (dict,), None, where)
    mtype = _field(model, "type", (str,), None, where, "model.")
    norm = _normalizer(_field(data, "normalizer", (dict, type(None)), None, where), where)
    pre = _field(data, "pre_tokenizer", (dict, type(None)), None, where)
    vocab = vocab_from_mapping(_field(model, "vocab", (dict,), None, where, "model."), f"{where}: model.vocab")
    added = _added_tokens(_field(data, "added_tokens", (list, type(None)), None, where) or [], vocab, where)
    spec = Spec(kind="", vocab=vocab, merges=None, added=added, normalizer=norm)
    for key in ("truncation", "padding"):  # kept as the defaults of tokkit.encode, written back on save
        value = _field(data, key, (dict, type(None)), None, where)
        if value is not None:
            encode_defaults({key: value}, where)  # checked now, so a bad file fails at load
            spec.extra[key] = value
    if mtype == "WordPiece":
        spec.kind = "wordpiece"
        _need(pre, {"type": "BertPreTokenizer"}, where, "pre_tokenizer")
        spec.unk_token = _field(model, "unk_token", (str,), None, where, "model.")
        if spec.unk_token not in vocab:
            raise TokkitError(f"{where}: model.unk_token {spec.unk_token!r} is not in the vocabulary")
        spec.prefix = _field(model, "continuing_subword_prefix", (str,), "##", where, "model.")
        spec.max_input_chars_per_word = _field(model, "max_input_chars_per_word", (int,), 100, where, "model.")
        if not 1 <= spec.max_input_chars_per_word <= MAX_WORD_CHARS:
            raise TokkitError(f"{where}: model.max_input_chars_per_word must be between 1 and {MAX_WORD_CHARS}")
    elif mtype == "BPE":
        for key, default in (("dropout", None), ("byte_fallback", False), ("fuse_unk", False),
                             ("ignore_merges", False), ("continuing_subword_prefix", None)):
            if model.get(key, default) not in (default,):
                raise TokkitError(f"{where}: model.{key}={model[key]!r} is not supported (only {default!r})")
        spec.merges = _merges(_field(model, "merges", (list,), [], where, "model."), set(vocab), where)
        spec.unk_token = _field(model, "unk_token", (str, type(None)), None, where, "model.")
        if spec.unk_token is not None and spec.unk_token not in vocab:
            raise TokkitError(f"{where}: model.unk_token {spec.unk_token!r} is not in the vocabulary")
        spec.suffix = _field(model, "end_of_word_suffix", (str, type(None)), None, where, "model.") or None
        if pre == {"type": "BertPreTokenizer"}:
            spec.kind = "bpe"
        else:
            spec.kind = "bytelevel"
            spec.pattern, spec.add_prefix_space = _bytelevel_pattern(pre, where)
            if spec.add_prefix_space and any(a.content.startswith(" ") for a in added):
                # the space put before the text after such a token would make it match where it did not
                raise TokkitError(f"{where}: pre_tokenizer.add_prefix_space=true with an added token that "
                                  "starts with a space is not supported")
            if norm is not None:
                raise TokkitError(f"{where}: field 'normalizer' must be null for a byte-level BPE")
            if spec.suffix is not None:
                raise TokkitError(f"{where}: model.end_of_word_suffix must be null for a byte-level BPE")
    else:
        raise TokkitError(f"{where}: model.type {mtype!r} is not supported (WordPiece or BPE)")
    spec.post = read_post(_field(data, "post_processor", (dict, type(None)), None, where), spec.token_ids(), where)
    spec.decoder_cleanup = _decoder(_field(data, "decoder", (dict, type(None)), None, where), spec, where)
    return spec


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
        max_length = _field(trunc, "max_length", (int,), None, where, "truncation.")
        if max_length < 1:
            raise TokkitError(f"{where}: truncation.max_length must be at least 1")
        strategy = _field(trunc, "strategy", (str,), "LongestFirst", where, "truncation.")
        if strategy not in _STRATEGIES:
            raise TokkitError(f"{where}: truncation.strategy {strategy!r} is not one of {', '.join(_STRATEGIES)}")
        if _field(trunc, "direction", (str,), "Right", where, "truncation.") != "Right":
            raise TokkitError(f"{where}: truncation.direction must be 'Right' (tokkit truncates at the end)")
        out.update(max_length=max_length, truncation=_STRATEGIES[strategy],
                   stride=_field(trunc, "stride", (int,), 0, where, "truncation."))
    pad = extra.get("padding")
    if pad is not None:
        strategy = pad.get("strategy", "BatchLongest")
        if strategy == "BatchLongest":
            out["padding"] = "longest"
        elif isinstance(strategy, dict) and set(strategy) == {"Fixed"} and isinstance(strategy["Fixed"], int) \
                and strategy["Fixed"] >= 1:
            out["padding"] = "max_length"
            out.setdefault("max_length", strategy["Fixed"])
        else:
            raise TokkitError(f"{where}: padding.strategy must be \"BatchLongest\" or {{\"Fixed\": N}}, got {strategy!r}")
        direction = _field(pad, "direction", (str,), "Right", where, "padding.")
        if direction not in ("Right", "Left"):
            raise TokkitError(f"{where}: padding.direction must be 'Right' or 'Left'")
        out["padding_side"] = direction.lower()
        out["pad_to_multiple_of"] = _field(pad, "pad_to_multiple_of", (int, type(None)), None, where, "padding.")
    return out


def _need(value, expected: dict, where: str, name: str) -> None:
    if value != expected:
        raise TokkitError(f"{where}: field '{name}' must be {expected}, got {value}")


def _normalizer(norm, where: str) -> BertNorm | None:
    if norm is None:
        return None
    if norm.get("type") != "BertNormalizer":
        raise TokkitError(f"{where}: normalizer type {norm.get('type')!r} is not supported (BertNormalizer or null)")
    flags = {key: _field(norm, key, (bool,), True, where, "normalizer.")
             for key in ("clean_text", "handle_chinese_chars", "lowercase")}
    return BertNorm(strip_accents=_field(norm, "strip_accents", (bool, type(None)), None, where, "normalizer."),
                    **flags)


def _added_tokens(entries: list, vocab: list[str], where: str) -> list[AddedToken]:
    added = []
    for i, entry in enumerate(entries):
        name = f"{where}: added_tokens[{i}]"
        _typed(entry, (dict,), where, f"added_tokens[{i}]")
        for key in ("single_word", "lstrip", "rstrip"):
            if entry.get(key, False):
                raise TokkitError(f"{name}.{key}=true is not supported")
        if entry.get("normalized", False) and entry.get("special", True) is False:
            raise TokkitError(f"{name}.normalized=true is not supported")
        idx, content = entry.get("id"), entry.get("content")
        if not isinstance(idx, int) or not content:
            raise TokkitError(f"{name}: needs an integer 'id' and a non-empty 'content'")
        if idx == len(vocab):
            vocab.append(content)  # an added token outside the model vocabulary takes the next id
        elif not 0 <= idx < len(vocab) or vocab[idx] != content:
            raise TokkitError(f"{name}: id {idx} does not hold {content!r} in the vocabulary")
        added.append(AddedToken(idx, content, bool(entry.get("special", True))))
    return added


def _merges(entries: list, known: set[str], where: str) -> list[tuple[str, str]]:
    merges = []
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            parts = entry.split(" ")
        elif isinstance(entry, list):
            parts = entry
        else:
            parts = []
        if len(parts) != 2 or not all(isinstance(p, str) and p for p in parts):
            raise TokkitError(f"{where}: model.merges[{i}] is not a pair: {entry!r}")
        pair = (parts[0], parts[1])
        check_merge(pair, known, f"{where}: model.merges[{i}]")
        merges.append(pair)
    if len(set(merges)) != len(merges):
        raise TokkitError(f"{where}: model.merges holds a pair twice")
    return merges


def _bytelevel_pattern(pre, where: str) -> tuple[str | None, bool]:
    """(Split pattern or None for GPT-2's, add_prefix_space) of a byte-level pre-tokenizer."""
    def is_bytelevel(p, use_regex, prefix=(False,)):
        return (isinstance(p, dict) and p.get("type") == "ByteLevel" and p.get("use_regex", True) == use_regex
                and p.get("add_prefix_space", True) in prefix)

    if is_bytelevel(pre, True, (False, True)):
        return None, pre.get("add_prefix_space", True)
    if (isinstance(pre, dict) and pre.get("type") == "Sequence" and len(pre.get("pretokenizers", [])) == 2
            and is_bytelevel(pre["pretokenizers"][1], False)):
        split = pre["pretokenizers"][0]
        if (isinstance(split, dict) and split.get("type") == "Split" and isinstance(split.get("pattern"), dict)
                and "Regex" in split["pattern"] and split.get("behavior") == "Isolated" and not split.get("invert", False)):
            pattern = _typed(split["pattern"]["Regex"], (str,), where, "pre_tokenizer.pretokenizers[0].pattern.Regex")
            try:
                regex.compile(pattern)
            except (regex.error, RecursionError, OverflowError) as exc:
                raise TokkitError(f"{where}: pre_tokenizer Split pattern is not a valid regex ({exc})") from None
            return (None if pattern == GPT2_PATTERN else pattern), False
    # After a Split, add_prefix_space would put a space before every piece: not supported.
    raise TokkitError(f"{where}: field 'pre_tokenizer' must be ByteLevel(use_regex=true) or "
                      f"Sequence[Split(Regex, Isolated), ByteLevel(use_regex=false)], got {pre}")


def _decoder(dec, spec: Spec, where: str) -> bool:
    expected = {"wordpiece": "WordPiece", "bpe": "BPEDecoder", "bytelevel": "ByteLevel"}[spec.kind]
    if dec is None or dec.get("type") != expected:
        raise TokkitError(f"{where}: decoder must be {expected} for this model, got {dec}")
    cleanup = _field(dec, "cleanup", (bool,), True, where, "decoder.")
    if expected == "WordPiece" and dec.get("prefix", "##") != spec.prefix:
        raise TokkitError(f"{where}: decoder.prefix differs from the model's continuing_subword_prefix")
    if expected == "BPEDecoder" and dec.get("suffix", "</w>") != (spec.suffix or "</w>"):
        raise TokkitError(f"{where}: decoder.suffix differs from the model's end_of_word_suffix")
    return cleanup


# ---------------------------------------------------------------------------------------- writing
def to_json(spec: Spec) -> dict:
    """The tokenizer.json object for `spec`, keys in the order tokenizers writes them."""
    ids = spec.token_ids()
    out: dict = {"version": "1.0", "truncation": spec.extra.get("truncation"), "padding": spec.extra.get("padding"),
                 "added_tokens": [
        {"id": a.id, "content": a.content, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": a.special} for a in spec.added]}
    n = spec.normalizer
    out["normalizer"] = None if n is None else {
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
    out["post_processor"] = post_json(spec.post, ids)
    if spec.kind == "wordpiece":
        out["decoder"] = {"type": "WordPiece", "prefix": spec.prefix, "cleanup": spec.decoder_cleanup}
        out["model"] = {"type": "WordPiece", "unk_token": spec.unk_token, "continuing_subword_prefix": spec.prefix,
                        "max_input_chars_per_word": spec.max_input_chars_per_word, "vocab": ids}
    else:
        out["decoder"] = ({"type": "BPEDecoder", "suffix": spec.suffix or "</w>"} if spec.kind == "bpe"
                          else bytelevel)
        out["model"] = {"type": "BPE", "dropout": None, "unk_token": spec.unk_token,
                        "continuing_subword_prefix": None, "end_of_word_suffix": spec.suffix, "fuse_unk": False,
                        "byte_fallback": False, "ignore_merges": False, "vocab": ids,
                        "merges": [[a, b] for a, b in spec.merges or ()]}
    return out


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
