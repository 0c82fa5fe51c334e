"""vocab.txt (WordPiece) and vocab.json + merges.txt (BPE): read into a Spec, and written for one.

tokenizer.json and the transformers side files live in tokkit.tokenizer.hf_json; `load_spec`
(tokkit.tokenizer.load) picks the reader; tokkit.tokenizer.recipes holds the pipelines the files
stand for.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "vocab.txt").write_text("[UNK]\\na\\n")
>>> spec = spec_from_vocab_txt(d / "vocab.txt")
>>> spec.vocab, list(vocab_files(spec))
(['[UNK]', 'a'], ['vocab.txt'])
"""
from __future__ import annotations

from pathlib import Path

from tokkit._files import dump_json, read_json, read_text
from tokkit.errors import TokkitError
from tokkit.tokenizer.models import BPE, WordPiece
from tokkit.tokenizer.pre_tokenizers import BertPreTokenizer
from tokkit.tokenizer.recipes import byte_level_spec, char_bpe_spec, wordpiece_spec
from tokkit.tokenizer.spec import Spec, specials_in
from tokkit.tokenizer.vocab import check_merge, detect_kind, token_ids, vocab_from_mapping

MERGES_HEADER = "#version: 0.2"
# The longest vocab.txt token accepted. The WordPiece encoder keeps every prefix of every token
# in its lookup tables (tokkit._native.encode.prefix_table), a 32-byte slot each, and a word is
# matched against them prefix by prefix. Real vocabularies hold tokens of a few dozen characters,
# and a word longer than max_input_chars_per_word (100 by default) is [UNK] anyway, so the limit
# is generous.
MAX_TOKEN_CHARS = 1000


def read_vocab_txt(path: Path) -> list[str]:
    """One token a line, id = line number. Only the line ending is taken off, as transformers reads
    the file (line breaks "\\n", "\\r\\n" or "\\r"): a token may end in a space or be U+2028 alone.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "vocab.txt"; _ = p.write_bytes("[UNK]\\r\\n\\u2028\\n \\n".encode())
    >>> read_vocab_txt(p)
    ['[UNK]', '\\u2028', ' ']
    """
    vocab: list[str] = []
    seen: dict[str, int] = {}
    lines = read_text(path).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[-1]:
        lines.pop()  # the final newline and empty lines at the very end
    for lineno, token in enumerate(lines, 1):
        if not token:
            raise TokkitError(f"{path}: line {lineno}: empty token")
        if len(token) > MAX_TOKEN_CHARS:
            raise TokkitError(f"{path}: line {lineno}: token of {len(token):,} characters; tokkit reads tokens "
                              f"of at most {MAX_TOKEN_CHARS:,} (tokkit.tokenizer.files.MAX_TOKEN_CHARS)")
        if token in seen:
            raise TokkitError(f"{path}: line {lineno}: duplicate token {token!r} (first on line {seen[token]})")
        seen[token] = lineno
        vocab.append(token)
    if not vocab:
        raise TokkitError(f"{path}: empty vocabulary")
    return vocab


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


def spec_from_vocab_txt(path: Path, *, lowercase=None, strip_accents=None, special_tokens=None) -> Spec:
    """A BERT WordPiece tokenizer from vocab.txt, honouring a tokenizer_config.json beside it."""
    vocab = read_vocab_txt(path)
    if "[UNK]" not in vocab:
        raise TokkitError(f"{path}: WordPiece vocabulary without '[UNK]'")
    config = {}
    config_path = path.parent / "tokenizer_config.json"
    if config_path.is_file():
        config = _config(config_path)
    if lowercase is None:
        lowercase = bool(config.get("do_lower_case", True))
    if strip_accents is None:
        strip_accents = config.get("strip_accents")
    specials = [a.content for a in specials_in(vocab, special_tokens)]
    return wordpiece_spec(vocab, specials, lowercase=lowercase, strip_accents=strip_accents,
                          model_max_length=_max_length(config))


def spec_from_vocab_json(vocab_path: Path, merges_path: Path, *, kind=None, lowercase=None,
                         strip_accents=None, special_tokens=None) -> Spec:
    """A BPE tokenizer from vocab.json + merges.txt; the kind is detected unless given."""
    vocab = vocab_from_mapping(read_json(vocab_path), str(vocab_path))
    if kind is None:
        kind = detect_kind(vocab, str(vocab_path))
    if kind not in ("bpe", "bytelevel"):
        raise TokkitError(f"kind={kind!r} does not fit vocab.json + merges.txt (use 'bpe' or 'bytelevel')")
    merges = read_merges_txt(merges_path, set(token_ids(vocab)))
    specials = [a.content for a in specials_in(vocab, special_tokens)]
    config_path = vocab_path.parent / "tokenizer_config.json"
    max_length = _max_length(_config(config_path) if config_path.is_file() else {})
    if kind == "bytelevel":
        if lowercase or strip_accents:
            raise TokkitError("bytelevel tokenizers have no normalizer: lowercase/strip_accents do not apply")
        return byte_level_spec(vocab, merges, specials, model_max_length=max_length)
    if "[UNK]" not in vocab:
        raise TokkitError(f"{vocab_path}: char BPE vocabulary without '[UNK]'")
    return char_bpe_spec(vocab, merges, specials, lowercase=bool(lowercase), strip_accents=strip_accents,
                         model_max_length=max_length)


def vocab_files(spec: Spec) -> dict[str, str]:
    """The vocab files (name -> text) that hold the same model as `spec`: vocab.txt for a WordPiece
    split by BERT's pre-tokenizer, vocab.json + merges.txt for a BPE split by it or byte-level (what
    the readers above make of them); none for other pipelines, nor where a line number or a vocab.json
    cannot say it (an unused id, an added token outside the model, a token holding a line break)."""
    model, vocab = spec.pipeline.model, spec.vocab
    if None in vocab or len(vocab) != len(model.tokens):
        return {}
    bert_split = isinstance(spec.pipeline.pre_tokenizer, BertPreTokenizer)
    if isinstance(model, WordPiece) and bert_split and not any("\n" in t or "\r" in t for t in vocab):
        return {"vocab.txt": "".join(tok + "\n" for tok in vocab)}
    if isinstance(model, BPE) and (bert_split or spec.kind == "bytelevel"):
        return {"vocab.json": dump_json(token_ids(vocab)),
                "merges.txt": MERGES_HEADER + "\n" + "".join(f"{a} {b}\n" for a, b in model.merges)}
    return {}


def _config(path: Path) -> dict:
    """tokenizer_config.json, which must hold a JSON object."""
    config = read_json(path)
    if not isinstance(config, dict):
        raise TokkitError(f"{path}: must hold a JSON object, not {type(config).__name__}")
    return config


def _max_length(config: dict) -> int:
    value = config.get("model_max_length", 512)
    # transformers writes a huge sentinel when it does not know the limit.
    return int(value) if isinstance(value, (int, float)) and value < 1e12 else 512
