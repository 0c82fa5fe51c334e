"""Read any tokenizer folder or file into a Spec: tokenizer.json, vocab.txt, vocab.json + merges.txt,
a SentencePiece .model, or a tiktoken rank file (.tiktoken, or Llama 3's tokenizer.model).

A folder is read by precedence: tokenizer.json > vocab.txt > vocab.json + merges.txt > a .model
(spiece.model, sentencepiece.bpe.model, tokenizer.model, or its one *.model file) > its one
*.tiktoken file. A .model file that starts with a rank line is a rank file. A JSON file's
kind comes from its structure: a tokenizer.json is an object whose "model" is an object, a
vocab.json an object of token -> integer id (so a vocabulary holding the token "model" stays a
vocabulary).

>>> load_spec("no/such/folder")
Traceback (most recent call last):
tokkit.errors.TokkitError: no/such/folder: no such file or folder
>>> json_kind({"model": {"type": "BPE"}}), json_kind({"model": 5, "the": 6})
('tokenizer.json', 'vocab.json')
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tokkit._files import read_json
from tokkit.errors import TokkitError
from tokkit.tokenizer.files import spec_from_vocab_json, spec_from_vocab_txt
from tokkit.tokenizer.gc_pause import paused_gc
from tokkit.tokenizer.hf_json import refuse_lone_surrogates, spec_from_json
from tokkit.tokenizer.models.unigram import serde_float
from tokkit.tokenizer.normalizers import BertNormalizer
from tokkit.tokenizer.sentencepiece_json import tokenizer_json_from_sentencepiece
from tokkit.tokenizer.sentencepiece_model import read_model
from tokkit.tokenizer.spec import KINDS, Spec, specials_in
from tokkit.tokenizer.tiktoken_file import is_rank_file, tokenizer_json_from_rank_file

SENTENCEPIECE_NAMES = ("spiece.model", "sentencepiece.bpe.model", "tokenizer.model")


def load_spec(path: Path, *, kind=None, lowercase=None, strip_accents=None, special_tokens=None,
              pattern=None) -> Spec:
    """Read a folder (by the precedence above) or one of its files.

    `pattern` (a name of tokkit._native.patterns or a regex) is a tiktoken rank file's split pattern;
    for a rank file `special_tokens` are its specials (token -> id, or a list numbered after the ranks).
    """
    path = Path(path)
    if kind is not None and kind not in KINDS:
        raise TokkitError(f"unknown kind {kind!r} (one of {', '.join(KINDS)})")
    if path.is_dir():
        path = tokenizer_file(path)
    with paused_gc():  # the file's containers hold no cycles: collecting while they pile up only walks them
        spec = _read_spec(path, kind=kind, lowercase=lowercase, strip_accents=strip_accents,
                          special_tokens=special_tokens, pattern=pattern)
        refuse_lone_surrogates(spec, str(path))
    return spec


def _read_spec(path: Path, *, kind, lowercase, strip_accents, special_tokens, pattern) -> Spec:
    if not path.is_file():
        raise TokkitError(f"{path}: no such file or folder")
    options = dict(kind=kind, lowercase=lowercase, strip_accents=strip_accents, special_tokens=special_tokens)
    if path.suffix in (".tiktoken", ".model") and is_rank_file(path):
        data = tokenizer_json_from_rank_file(path, pattern=pattern, specials=special_tokens)
        return _from_tokenizer_json(data, path, **{**options, "special_tokens": None})
    if pattern is not None:
        raise TokkitError(f"{path}: pattern= applies to a tiktoken rank file only")
    if path.suffix == ".model":
        data = tokenizer_json_from_sentencepiece(read_model(path), str(path))
        return _from_tokenizer_json(data, path, **options)
    if path.suffix == ".txt" and path.name != "merges.txt":
        if kind not in (None, "wordpiece"):
            raise TokkitError(f"{path}: a vocab.txt is a WordPiece vocabulary, not kind={kind!r}")
        return spec_from_vocab_txt(path, lowercase=lowercase, strip_accents=strip_accents,
                                   special_tokens=special_tokens)
    if path.name == "merges.txt":
        path = path.with_name("vocab.json")
    data = read_json(path, parse_float=lambda text: serde_float(text, str(path)))
    if json_kind(data, str(path)) == "tokenizer.json":
        return _from_tokenizer_json(data, path, **options)
    merges = path.with_name("merges.txt")
    if not merges.is_file():
        raise TokkitError(f"{path}: a vocab.json needs a merges.txt beside it")
    return spec_from_vocab_json(path, merges, **options)


def tokenizer_file(folder: Path) -> Path:
    """The file a folder is read from: tokenizer.json > vocab.txt > vocab.json + merges.txt > a .model."""
    for name in ("tokenizer.json", "vocab.txt"):
        if (folder / name).is_file():
            return folder / name
    if (folder / "vocab.json").is_file() and (folder / "merges.txt").is_file():
        return folder / "vocab.json"
    for name in SENTENCEPIECE_NAMES:
        if (folder / name).is_file():
            return folder / name
    models = sorted(p for p in folder.glob("*.model") if p.is_file())
    if not models:
        models = sorted(p for p in folder.glob("*.tiktoken") if p.is_file())
    if len(models) == 1:
        return models[0]
    if models:
        raise TokkitError(f"{folder}: several SentencePiece models ({', '.join(p.name for p in models)}); "
                          "load one of them by its path")
    if (folder / "vocab.json").is_file():
        raise TokkitError(f"{folder / 'vocab.json'}: a vocab.json needs a merges.txt beside it")
    raise TokkitError(f"{folder}: no tokenizer.json, vocab.txt, vocab.json + merges.txt or SentencePiece .model "
                      "in this folder")


def json_kind(data, where: str = "JSON file") -> str:
    """'tokenizer.json' or 'vocab.json', by the structure of the parsed file."""
    if isinstance(data, dict):
        model = data.get("model")
        if isinstance(model, dict) and ("type" in model or "vocab" in model):
            return "tokenizer.json"
        if data and all(isinstance(v, int) and not isinstance(v, bool) for v in data.values()):
            return "vocab.json"
        if "model" in data:
            return "tokenizer.json"  # a broken one: its reader names the field that is wrong
    raise TokkitError(f"{where}: neither a tokenizer.json (an object whose 'model' is an object) nor a "
                      "vocab.json (an object of token -> integer id)")


def _from_tokenizer_json(data: dict, path: Path, *, kind, lowercase, strip_accents, special_tokens) -> Spec:
    """A Spec from a tokenizer.json object, with the caller's options applied to its components (so the
    options act alike whichever encode path the components end up on)."""
    spec = spec_from_json(data, str(path))
    if kind is not None and kind != spec.kind:
        raise TokkitError(f"{path}: holds a {spec.kind} tokenizer, not kind={kind!r}")
    normalizer = with_bert_options(spec.pipeline.normalizer, lowercase, strip_accents, str(path))
    added = spec.added
    if special_tokens:
        known = {a.content for a in added}
        extra = tuple(a for a in specials_in(spec.vocab, special_tokens) if a.content not in known)
        added = tuple(sorted(added + extra, key=lambda a: a.id))
    return replace(spec, pipeline=replace(spec.pipeline, normalizer=normalizer), added=added)


def with_bert_options(normalizer, lowercase: bool | None, strip_accents: bool | None, where: str):
    """`normalizer` with load()'s lowercase= and strip_accents= applied (None: as the file says).

    They set a BertNormalizer's fields; without any normalizer, only asking for no lowercasing and no
    accent stripping is possible. Anything else is one error naming the file.

    >>> with_bert_options(BertNormalizer(True, True, None, True), False, None, "t.json").lowercase
    False
    >>> from tokkit.tokenizer.normalizers import NFC
    >>> with_bert_options(NFC(), True, None, "t.json")
    Traceback (most recent call last):
    tokkit.errors.TokkitError: t.json: lowercase= and strip_accents= apply to a BertNormalizer only (its normalizer is NFC)
    """
    if lowercase is None and strip_accents is None:
        return normalizer
    if isinstance(normalizer, BertNormalizer):
        return replace(normalizer, lowercase=normalizer.lowercase if lowercase is None else lowercase,
                       strip_accents=normalizer.strip_accents if strip_accents is None else strip_accents)
    if normalizer is None and not lowercase and not strip_accents:
        return None
    has = f"its normalizer is {type(normalizer).__name__}" if normalizer is not None else "it has no normalizer"
    raise TokkitError(f"{where}: lowercase= and strip_accents= apply to a BertNormalizer only ({has})")
