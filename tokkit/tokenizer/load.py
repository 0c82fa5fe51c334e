"""Read any tokenizer folder or file into a Spec: tokenizer.json, vocab.txt, or vocab.json + merges.txt.

>>> load_spec("no/such/folder")
Traceback (most recent call last):
tokkit.errors.TokkitError: no/such/folder: no such file or folder
"""
from __future__ import annotations

from pathlib import Path

from tokkit._files import read_json
from tokkit.errors import TokkitError
from tokkit.text.normalize import BertNorm
from tokkit.tokenizer.files import spec_from_vocab_json, spec_from_vocab_txt
from tokkit.tokenizer.hf_json import spec_from_json
from tokkit.tokenizer.spec import KINDS, Spec, specials_in


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
    if isinstance(data, dict) and "model" in data:
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
