"""Quality figures of a vocabulary on a corpus: what `tokkit stats` and `tokkit compare` report.

Definitions (all computed on the corpus's non-empty lines, each encoded without template specials):

- fertility: tokens per word, a word being a whitespace-separated run (the same for every tokenizer,
  so figures compare across vocabularies);
- bytes per token: UTF-8 bytes of the lines / tokens;
- [UNK] rate: share of tokens that are the unknown token (None for byte-level vocabularies, which have none);
- vocab used: share of the non-special vocabulary that occurs at least once;
- mean token length: mean length in characters of the produced tokens' surface text, weighted by
  use, special tokens such as [UNK] left out (WordPiece `##` and char-BPE `</w>` stripped,
  byte-level tokens decoded from their bytes, a cut UTF-8 character counting as one);
- outside main script: the corpus's main script is the Unicode script of most of its letters
  (Han, Hiragana and Katakana count as one, "Han/Kana"); a token is outside when it holds a letter
  of another script. Digits, punctuation and marks (scripts Common and Inherited) never count;
  a byte-level token cut inside a character counts by the block its lead byte starts, and a
  token of continuation bytes alone does not count;
- longest tokens of the vocabulary (by surface length) and most frequent tokens on the corpus.

>>> token_surface("##ing", "wordpiece"), token_surface("low</w>", "bpe"), token_surface("Ġhi", "bytelevel")
('ing', 'low', ' hi')
>>> token_surface("▁hi", "unigram")
' hi'
>>> script_of("a"), script_of("ж"), script_of("の"), script_of("1")
('Latin', 'Cyrillic', 'Han/Kana', None)
"""
from __future__ import annotations

import unicodedata
from collections import Counter
from functools import lru_cache
from typing import Iterable

import numpy as np
import regex

from tokkit._native.byte_symbols import decode_symbols
from tokkit.errors import TokkitError
from tokkit.tokenizer.vocab import detect_kind as detect_vocab_kind

SCRIPTS = ("Latin", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "Syriac", "Thaana", "Devanagari",
           "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu", "Kannada", "Malayalam", "Sinhala",
           "Thai", "Lao", "Tibetan", "Myanmar", "Georgian", "Hangul", "Ethiopic", "Cherokee", "Khmer",
           "Mongolian", "Han", "Hiragana", "Katakana", "Bopomofo")
_GROUP = {"Han": "Han/Kana", "Hiragana": "Han/Kana", "Katakana": "Han/Kana", "Bopomofo": "Han/Kana"}
METRICS = ("fertility", "bytes_per_token", "unk_rate", "vocab_used", "mean_token_length", "outside_script_rate")
LABELS = {"fertility": "tokens per word", "bytes_per_token": "bytes per token", "unk_rate": "[UNK] rate",
          "vocab_used": "vocab used", "mean_token_length": "mean token length (chars)",
          "outside_script_rate": "tokens outside main script"}


@lru_cache(maxsize=None)
def _script_patterns():
    return [(name, regex.compile(rf"\p{{Script={name}}}")) for name in SCRIPTS]


@lru_cache(maxsize=65536)
def script_of(ch: str) -> str | None:
    """The script group of a letter, 'Other' for a letter of an unlisted script, None for a non-letter."""
    if not unicodedata.category(ch).startswith("L"):
        return None
    for name, pattern in _script_patterns():
        if pattern.match(ch):
            return _GROUP.get(name, name)
    return "Other"


def token_surface(token: str, kind: str) -> str:
    """The text a token stands for, without WordPiece/BPE markers."""
    if kind == "wordpiece":
        return token[2:] if token.startswith("##") and len(token) > 2 else token
    if kind == "bpe":
        return token[:-4] if token.endswith("</w>") else token
    if kind == "unigram":
        return token.replace("\u2581", " ")  # Metaspace's ▁ is the space before a word
    if kind == "bytelevel":
        data = decode_symbols(token)
        return token if data is None else data.decode("utf-8", errors="replace")
    return token


def token_letters(token: str, kind: str) -> str:
    """The characters whose scripts a token carries (a byte-level token cut inside a character
    contributes that character's block, found by padding its lead byte's sequence)."""
    text = token_surface(token, kind)
    if kind != "bytelevel" or "\ufffd" not in text:
        return text
    data = decode_symbols(token) or b""
    full = data.decode("utf-8", errors="ignore")
    for j in range(len(data) - 1, max(-1, len(data) - 4), -1):
        if data[j] >= 0xC0:  # the last lead byte: is its sequence cut by the token's end?
            need = 2 if data[j] < 0xE0 else 3 if data[j] < 0xF0 else 4
            if len(data) - j < need:
                full += (data[j:] + b"\x80" * need)[:need].decode("utf-8", errors="ignore")
            break
    return full


def detect_kind(tokenizer) -> str:
    """The tokenizer's `kind` attribute, else a guess from its vocabulary's markers."""
    kind = getattr(tokenizer, "kind", None)
    if kind:
        return kind
    tokens = [tokenizer.id_to_token(i) or "" for i in range(tokenizer.vocab_size)]
    try:
        return detect_vocab_kind(tokens, "vocabulary")
    except TokkitError:  # neither BPE marker: WordPiece is the only other kind
        return "wordpiece"


def main_script(lines: list[str]) -> str | None:
    """The script of most letters in `lines` (None when there is no letter)."""
    counts: Counter = Counter()
    for line in lines:
        counts.update(line)
    by_script: Counter = Counter()
    for ch, n in counts.items():
        s = script_of(ch)
        if s is not None:
            by_script[s] += n
    return by_script.most_common(1)[0][0] if by_script else None


def _unk_id(tokenizer, kind: str) -> int | None:
    if kind == "bytelevel":
        return None
    name = getattr(tokenizer, "unk_token", None) or ("<unk>" if kind == "unigram" else "[UNK]")
    return tokenizer.token_to_id(name)


def corpus_stats(tokenizer, texts: Iterable[str], *, top: int = 10, num_threads: int | None = None) -> dict:
    """Every figure of the module docstring for `tokenizer` on `texts` (lines or documents).

    `tokenizer` needs encode_batch(texts, num_threads=), id_to_token, token_to_id, vocab_size and
    special_tokens (tokkit.Tokenizer has them).
    """

    lines = [t for text in texts for t in text.splitlines() if t.strip()]
    if not lines:
        raise TokkitError("the corpus has no text to measure")
    kind = detect_kind(tokenizer)
    V = tokenizer.vocab_size
    counts = np.zeros(V, dtype=np.int64)
    for start in range(0, len(lines), 20_000):  # batches keep memory flat on big corpora
        ids = tokenizer.encode_batch(lines[start:start + 20_000], num_threads=num_threads)
        flat = np.fromiter((i for row in ids for i in row), dtype=np.int64)
        counts += np.bincount(flat, minlength=V)[:V]
    n_tokens = int(counts.sum())
    words = sum(len(line.split()) for line in lines)
    n_bytes = sum(len(line.encode("utf-8", "surrogatepass")) for line in lines)
    specials = {tokenizer.token_to_id(t) for t in tokenizer.special_tokens} - {None}
    unk = _unk_id(tokenizer, kind)
    used = np.flatnonzero(counts)
    surface = {int(i): token_surface(tokenizer.id_to_token(int(i)), kind) for i in used}
    script = main_script(lines)
    outside = 0
    for i in surface:
        if i in specials:
            continue
        if any((sc := script_of(ch)) is not None and sc != script
               for ch in token_letters(tokenizer.id_to_token(i), kind)):
            outside += int(counts[i])
    regular = [i for i in range(V) if i not in specials]
    n_regular = n_tokens - sum(int(counts[i]) for i in specials if i < V)
    longest = sorted(regular, key=lambda i: (-len(token_surface(tokenizer.id_to_token(i), kind)), i))[:top]
    order = np.argsort(-counts, kind="stable")[:top]
    return {
        "kind": kind,
        "vocab_size": V,
        "lines": len(lines),
        "words": words,
        "bytes": n_bytes,
        "tokens": n_tokens,
        "fertility": n_tokens / words if words else None,
        "bytes_per_token": n_bytes / n_tokens if n_tokens else None,
        "unk_rate": (int(counts[unk]) / n_tokens if n_tokens else 0.0) if unk is not None else None,
        "vocab_used": len(set(map(int, used)) - specials) / max(1, len(regular)),
        "mean_token_length": (sum(int(counts[i]) * len(s) for i, s in surface.items() if i not in specials)
                              / n_regular if n_regular else None),
        "main_script": script,
        "outside_script_rate": outside / n_tokens if n_tokens else None,
        "longest_tokens": [tokenizer.id_to_token(i) for i in longest],
        "most_frequent": [(tokenizer.id_to_token(int(i)), int(counts[i])) for i in order if counts[i] > 0],
    }


def format_value(key: str, value) -> str:
    """A figure as the tables show it."""
    if value is None:
        return "n/a"
    if key in ("unk_rate", "vocab_used", "outside_script_rate"):
        return f"{100 * value:.2f}%"
    if isinstance(value, float):
        return f"{value:.3f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def format_stats(stats: dict, *, name: str = "") -> str:
    """A readable report of one corpus_stats() result."""
    head = f"{name}: " if name else ""
    lines = [f"{head}{stats['kind']} vocabulary of {stats['vocab_size']:,} on {stats['lines']:,} lines, "
             f"{stats['words']:,} words, {stats['bytes']:,} bytes -> {stats['tokens']:,} tokens"]
    for key in METRICS:
        lines.append(f"  {LABELS[key]:<28} {format_value(key, stats[key])}")
    lines.append(f"  {'main script':<28} {stats['main_script']}")
    lines.append(f"  {'longest tokens':<28} {' '.join(stats['longest_tokens'])}")
    lines.append(f"  {'most frequent':<28} " + " ".join(f"{t} ({n:,})" for t, n in stats["most_frequent"]))
    return "\n".join(lines)
