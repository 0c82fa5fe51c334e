"""Vocabulary files: the Spec every Tokenizer is built from, and vocab.txt / vocab.json + merges.txt.

tokenizer.json and the transformers side files live in tokkit.formats_hf.

>>> spec = Spec(kind="wordpiece", vocab=["[UNK]", "a", "##b"], merges=None,
...             added=[AddedToken(0, "[UNK]")], unk_token="[UNK]", normalizer=BertNorm())
>>> spec.token_ids()["##b"]
2
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from tokkit.errors import TokkitError

KINDS = ("wordpiece", "bpe", "bytelevel")
BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
MERGES_HEADER = "#version: 0.2"


@dataclass(frozen=True)
class AddedToken:
    """A token matched in the raw text before normalisation (tokenizers' `added_tokens`)."""

    id: int
    content: str
    special: bool = True


@dataclass(frozen=True)
class BertNorm:
    """BertNormalizer options; `strip_accents=None` follows `lowercase`, as in tokenizers."""

    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool | None = None
    lowercase: bool = True

    @property
    def strips_accents(self) -> bool:
        return self.lowercase if self.strip_accents is None else self.strip_accents


@dataclass
class Spec:
    """Everything that defines a tokenizer, as plain data (what gets pickled and saved).

    `vocab` lists every token by id (model vocabulary and added tokens). `pattern` is None for
    the GPT-2 pattern. `post` is the (cls, sep) pair of the BERT template, or None.
    """

    kind: str
    vocab: list[str]
    merges: list[tuple[str, str]] | None
    added: list[AddedToken]
    unk_token: str | None = None
    normalizer: BertNorm | None = None
    pattern: str | None = None
    prefix: str = "##"
    max_input_chars_per_word: int = 100
    suffix: str | None = None
    post: tuple[str, str] | None = None
    decoder_cleanup: bool = True
    model_max_length: int = 512
    extra: dict = field(default_factory=dict)

    def token_ids(self) -> dict[str, int]:
        return {tok: i for i, tok in enumerate(self.vocab)}

    def with_options(self, **changes) -> "Spec":
        return replace(self, **changes)


def bert_post(vocab: list[str] | dict, specials: list[str]) -> tuple[str, str] | None:
    """The BERT template pair when both [CLS] and [SEP] are special tokens, else None."""
    return ("[CLS]", "[SEP]") if "[CLS]" in specials and "[SEP]" in specials else None


def atomic_write(path: Path, text: str) -> None:
    """Write `text` as UTF-8 to a temporary name beside `path`, then rename it into place."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    os.replace(tmp, path)


def dump_json(obj) -> str:
    """The one JSON formatting tokkit writes: 2-space indent, non-ASCII kept, insertion order."""
    return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"


def read_json(path: Path):
    """Parse a JSON file; a syntax error or a repeated key names the file and line."""

    def no_duplicates(pairs):
        seen = {}
        for key, value in pairs:
            if key in seen:
                raise TokkitError(f"{path}: duplicate key {key!r}")
            seen[key] = value
        return seen

    text = read_text(path)
    try:
        return json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise TokkitError(f"{path}: line {exc.lineno}: invalid JSON ({exc.msg})") from None


def read_text(path: Path) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TokkitError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TokkitError(f"{path}: line {line}: invalid UTF-8 at byte {exc.start}") from None


def read_vocab_txt(path: Path) -> list[str]:
    """One token a line, id = line number; trailing whitespace is dropped as tokenizers does."""
    vocab: list[str] = []
    seen: dict[str, int] = {}
    lines = read_text(path).split("\n")
    while lines and not lines[-1].strip():
        lines.pop()  # the final newline and blank lines at the very end
    for lineno, line in enumerate(lines, 1):
        token = line.rstrip()
        if not token:
            raise TokkitError(f"{path}: line {lineno}: empty token")
        if token in seen:
            raise TokkitError(f"{path}: line {lineno}: duplicate token {token!r} (first on line {seen[token]})")
        seen[token] = lineno
        vocab.append(token)
    if not vocab:
        raise TokkitError(f"{path}: empty vocabulary")
    return vocab


def vocab_from_mapping(mapping: dict, where: str) -> list[str]:
    """Turn {token: id} into a list by id; ids must be 0..n-1 without holes or repeats."""
    if not isinstance(mapping, dict) or not mapping:
        raise TokkitError(f"{where}: expected a non-empty object of token -> id")
    vocab: list[str | None] = [None] * len(mapping)
    for token, idx in mapping.items():
        if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < len(mapping):
            raise TokkitError(f"{where}: token {token!r} has id {idx!r}; ids must be 0..{len(mapping) - 1}")
        if vocab[idx] is not None:
            raise TokkitError(f"{where}: id {idx} is given to both {vocab[idx]!r} and {token!r}")
        vocab[idx] = token
    return vocab  # type: ignore[return-value]


def read_merges_txt(path: Path, known: set[str], suffix: str | None = None) -> list[tuple[str, str]]:
    """`#version` header (optional), then `left right` per line; both sides must be tokens."""
    merges: list[tuple[str, str]] = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in enumerate(read_text(path).split("\n"), 1):
        if lineno == 1 and line.startswith("#version"):
            continue
        if not line.strip():
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise TokkitError(f"{path}: line {lineno}: expected 'left right', got {line!r}")
        pair = (parts[0], parts[1])
        check_merge(pair, known, f"{path}: line {lineno}")
        if pair in seen:
            raise TokkitError(f"{path}: line {lineno}: duplicate merge {line!r} (first on line {seen[pair]})")
        seen[pair] = lineno
        merges.append(pair)
    return merges


def check_merge(pair: tuple[str, str], known: set[str], where: str) -> None:
    for side in pair:
        if side not in known:
            raise TokkitError(f"{where}: merge {' '.join(pair)!r} names unknown token {side!r}")
    if pair[0] + pair[1] not in known:
        raise TokkitError(f"{where}: merge {' '.join(pair)!r} makes {pair[0] + pair[1]!r}, which is not in the vocabulary")


def detect_kind(vocab: list[str], where: str) -> str:
    """`</w>` tokens mean char BPE; the full GPT-2 byte alphabet means bytelevel."""
    from tokkit.bytes import bytes_to_unicode

    if any(tok.endswith("</w>") for tok in vocab):
        return "bpe"
    if set(bytes_to_unicode()) <= set(vocab):
        return "bytelevel"
    raise TokkitError(f"{where}: cannot tell the BPE kind (no '</w>' tokens and not the full byte alphabet); "
                      "pass kind='bpe' or kind='bytelevel'")


def specials_in(vocab: list[str], extra: list[str] | None) -> list[AddedToken]:
    """The BERT specials present in `vocab` plus any extra ones asked for, as added tokens."""
    ids = {tok: i for i, tok in enumerate(vocab)}
    names = [t for t in BERT_SPECIALS if t in ids]
    for tok in extra or ():
        if tok not in ids:
            raise TokkitError(f"special token {tok!r} is not in the vocabulary")
        if tok not in names:
            names.append(tok)
    return sorted((AddedToken(ids[t], t) for t in names), key=lambda a: a.id)


def spec_from_vocab_txt(path: Path, *, lowercase=None, strip_accents=None, special_tokens=None) -> Spec:
    """A BERT WordPiece tokenizer from vocab.txt, honouring a tokenizer_config.json beside it."""
    vocab = read_vocab_txt(path)
    if "[UNK]" not in vocab:
        raise TokkitError(f"{path}: WordPiece vocabulary without '[UNK]'")
    config = {}
    config_path = path.parent / "tokenizer_config.json"
    if config_path.is_file():
        config = read_json(config_path)
    if lowercase is None:
        lowercase = bool(config.get("do_lower_case", True))
    if strip_accents is None:
        strip_accents = config.get("strip_accents")
    added = specials_in(vocab, special_tokens)
    return Spec(kind="wordpiece", vocab=vocab, merges=None, added=added, unk_token="[UNK]",
                normalizer=BertNorm(strip_accents=strip_accents, lowercase=lowercase),
                post=bert_post(vocab, [a.content for a in added]),
                model_max_length=_max_length(config))


def spec_from_vocab_json(vocab_path: Path, merges_path: Path, *, kind=None, lowercase=None,
                         strip_accents=None, special_tokens=None) -> Spec:
    """A BPE tokenizer from vocab.json + merges.txt; the kind is detected unless given."""
    vocab = vocab_from_mapping(read_json(vocab_path), str(vocab_path))
    if kind is None:
        kind = detect_kind(vocab, str(vocab_path))
    if kind not in ("bpe", "bytelevel"):
        raise TokkitError(f"kind={kind!r} does not fit vocab.json + merges.txt (use 'bpe' or 'bytelevel')")
    merges = read_merges_txt(merges_path, set(vocab))
    added = specials_in(vocab, special_tokens)
    config_path = vocab_path.parent / "tokenizer_config.json"
    config = read_json(config_path) if config_path.is_file() else {}
    spec = Spec(kind=kind, vocab=vocab, merges=merges, added=added,
                post=bert_post(vocab, [a.content for a in added]), model_max_length=_max_length(config))
    if kind == "bpe":
        if "[UNK]" not in vocab:
            raise TokkitError(f"{vocab_path}: char BPE vocabulary without '[UNK]'")
        spec.unk_token = "[UNK]"
        spec.suffix = "</w>"
        spec.normalizer = BertNorm(strip_accents=strip_accents, lowercase=bool(lowercase))
    elif lowercase or strip_accents:
        raise TokkitError("bytelevel tokenizers have no normalizer: lowercase/strip_accents do not apply")
    return spec


def _max_length(config: dict) -> int:
    value = config.get("model_max_length", 512)
    # transformers writes a huge sentinel when it does not know the limit.
    return int(value) if isinstance(value, (int, float)) and value < 1e12 else 512


def load_spec(path: Path, *, kind=None, lowercase=None, strip_accents=None, special_tokens=None) -> Spec:
    """Read a folder (tokenizer.json > vocab.txt > vocab.json + merges.txt) or one of those files."""
    path = Path(path)
    if kind is not None and kind not in KINDS:
        raise TokkitError(f"unknown kind {kind!r} (one of {', '.join(KINDS)})")
    if path.is_dir():
        for name in ("tokenizer.json", "vocab.txt", "vocab.json"):
            if (path / name).is_file():
                path = path / name
                break
        else:
            raise TokkitError(f"{path}: no tokenizer.json, vocab.txt or vocab.json + merges.txt in this folder")
    elif not path.is_file():
        raise TokkitError(f"{path}: no such file or folder")
    if path.suffix == ".txt" and path.name != "merges.txt":
        if kind not in (None, "wordpiece"):
            raise TokkitError(f"{path}: a vocab.txt is a WordPiece vocabulary, not kind={kind!r}")
        return spec_from_vocab_txt(path, lowercase=lowercase, strip_accents=strip_accents,
                                   special_tokens=special_tokens)
    if path.name == "merges.txt":
        path = path.with_name("vocab.json")
    data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("model"), dict):
        from tokkit.formats_hf import spec_from_json

        spec = spec_from_json(data, str(path))
        if kind is not None and kind != spec.kind:
            raise TokkitError(f"{path}: holds a {spec.kind} tokenizer, not kind={kind!r}")
        if spec.normalizer is not None and (lowercase is not None or strip_accents is not None):
            norm = spec.normalizer
            spec.normalizer = BertNorm(norm.clean_text, norm.handle_chinese_chars,
                                       norm.strip_accents if strip_accents is None else strip_accents,
                                       norm.lowercase if lowercase is None else lowercase)
        if special_tokens:
            extra = [a for a in specials_in(spec.vocab, special_tokens) if a.content not in
                     {b.content for b in spec.added}]
            spec.added = sorted(spec.added + extra, key=lambda a: a.id)
        return spec
    merges = path.with_name("merges.txt")
    if not merges.is_file():
        raise TokkitError(f"{path}: a vocab.json needs a merges.txt beside it")
    return spec_from_vocab_json(path, merges, kind=kind, lowercase=lowercase, strip_accents=strip_accents,
                                special_tokens=special_tokens)
