"""Encode benchmark tasks, set up inside a worker process (see tokkit.bench.worker).

Each function loads a vocabulary and the benchmark text, then returns the zero-argument callable
that the worker times. Contenders are imported here only, inside the worker, so `tokkit bench`
never imports them into its own process. Text conventions (shared by all contenders):

- "whole": the slice as one string;
- "lines": the slice's non-empty lines, without their line ends;
- "pairs": consecutive lines (2i, 2i+1) as (A, B) pairs.

>>> lines_of("a\\n\\nb\\n"), pairs_of(["p0", "p1", "p2"])
(['a', 'b'], (['p0'], ['p1']))
"""
from __future__ import annotations

import json
import os

import numpy as np

import tokkit
from tokkit.bench.contenders import (fastokens_file, gigatoken_file, nanotoken_file, tiktoken_from_bytelevel,
                                     tokenizers_file, transformers_fast)


def read_text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def lines_of(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


def pairs_of(lines: list[str]) -> tuple[list[str], list[str]]:
    n = len(lines) // 2
    return lines[0:2 * n:2], lines[1:2 * n:2]


def input_mb(text_path: str) -> float:
    """The slice's UTF-8 megabytes: the work unit of every encode measurement (as bench_encode.py)."""
    return os.path.getsize(text_path) / 1e6


def _texts(text_path: str, mode: str):
    text = read_text(text_path)
    if mode == "whole":
        return text
    lines = lines_of(text)
    return pairs_of(lines) if mode == "pairs" else lines


# ---------------------------------------------------------------------------------------- tokkit
def tokkit_encode(vocab_dir: str, text_path: str, mode: str = "whole", threads: int = 1):
    """tokkit: `encode(whole)` or `encode_batch(lines, num_threads=threads)`."""

    tok = tokkit.load(vocab_dir)
    data = _texts(text_path, mode)
    if mode == "whole":
        return lambda: tok.encode(data)
    return lambda: tok.encode_batch(data, num_threads=threads)


def tokkit_numpy(vocab_dir: str, text_path: str):
    """tokkit: `encode_to_numpy(whole)`, the whole text's ids as one array."""
    tok = tokkit.load(vocab_dir)
    text = _texts(text_path, "whole")
    return lambda: tok.encode_to_numpy(text)


def tokkit_flat(vocab_dir: str, text_path: str, threads: int = 1):
    """tokkit: `encode_batch_flat(lines, num_threads=threads)`, ids and row offsets as two arrays."""
    tok = tokkit.load(vocab_dir)
    lines = _texts(text_path, "lines")
    return lambda: tok.encode_batch_flat(lines, num_threads=threads)


def tokkit_pairs(vocab_dir: str, text_path: str, threads: int = 2, max_length: int = 128):
    """tokkit: BERT pair inputs, truncated longest_first and padded to max_length, as numpy arrays."""

    tok = tokkit.load(vocab_dir)
    a, b = _texts(text_path, "pairs")
    return lambda: tokkit.encode(tok, a, b, max_length=max_length, truncation="longest_first",
                                 padding="max_length", num_threads=threads)


# ------------------------------------------------------------------------------------ tokenizers
def tokenizers_encode(vocab_dir: str, text_path: str, mode: str = "lines"):
    """tokenizers: `encode(whole)` or `encode_batch(lines)`, without template specials.

    Its thread count is RAYON_NUM_THREADS, set by the suite in this worker's environment.
    """
    tok = tokenizers_file(vocab_dir)
    data = _texts(text_path, mode)
    if mode == "whole":
        return lambda: tok.encode(data, add_special_tokens=False)
    return lambda: tok.encode_batch(data, add_special_tokens=False)


def tokenizers_pairs(vocab_dir: str, text_path: str, max_length: int = 128):
    """tokenizers: encode_batch of pairs with truncation and padding, then the numpy arrays."""
    tok = tokenizers_file(vocab_dir)
    tok.enable_truncation(max_length, strategy="longest_first")
    tok.enable_padding(length=max_length, pad_id=tok.token_to_id("[PAD]") or 0, pad_token="[PAD]")
    pairs = list(zip(*_texts(text_path, "pairs")))

    def run():
        encs = tok.encode_batch(pairs)
        return (np.array([e.ids for e in encs]), np.array([e.type_ids for e in encs]),
                np.array([e.attention_mask for e in encs]))
    return run


# ------------------------------------------------------------------------------------- nanotoken
def nanotoken_flat(vocab_dir: str, text_path: str, threads: int = 1):
    """nanotoken: `encode_batch(lines)` into its flat ids + row offsets, without template specials.

    One thread is its `parallel=False`; more is its pool, sized by RAYON_NUM_THREADS, set by the
    suite in this worker's environment.
    """
    tok = nanotoken_file(vocab_dir)
    lines = _texts(text_path, "lines")
    return lambda: tok.encode_batch(lines, add_special_tokens=False, parallel=threads > 1)


# ---------------------------------------------------------------------------------- transformers
def transformers_lines(vocab_dir: str, text_path: str):
    """transformers' fast tokenizer called on the lines (it runs `tokenizers` underneath)."""
    tok = transformers_fast(vocab_dir)
    lines = _texts(text_path, "lines")
    return lambda: tok(lines, add_special_tokens=False)["input_ids"]


def transformers_pairs(vocab_dir: str, text_path: str, max_length: int = 128):
    """transformers' fast tokenizer: pairs, longest_first, padded, return_tensors="np"."""
    tok = transformers_fast(vocab_dir)
    a, b = _texts(text_path, "pairs")
    return lambda: tok(a, b, max_length=max_length, truncation="longest_first", padding="max_length",
                       return_tensors="np", return_special_tokens_mask=True)


# -------------------------------------------------------------------------------------- tiktoken
def tiktoken_encode(vocab_dir: str, text_path: str):
    """tiktoken `encode_ordinary(whole string)`, one thread."""
    enc = tiktoken_from_bytelevel(vocab_dir)
    text = _texts(text_path, "whole")
    return lambda: enc.encode_ordinary(text)


def tiktoken_batch(vocab_dir: str, text_path: str, threads: int = 2):
    """tiktoken `encode_ordinary_batch(lines, num_threads=threads)`."""
    enc = tiktoken_from_bytelevel(vocab_dir)
    lines = _texts(text_path, "lines")
    return lambda: enc.encode_ordinary_batch(lines, num_threads=threads)


# ---------------------------------------------------------------------------------- byte-level specialists
def gigatoken_encode(vocab_dir: str, text_path: str, mode: str = "whole", threads: int = 1):
    """gigatoken: `encode(whole)`, or `encode_batch(lines)` (flat ids + offsets), in parallel on more
    than one thread (its pool is sized by RAYON_NUM_THREADS, set by the suite in this worker)."""
    tok = gigatoken_file(vocab_dir)
    data = _texts(text_path, mode)
    if mode == "whole":
        return lambda: tok.encode(data)
    return lambda: tok.encode_batch(data, parallel=threads > 1)


def fastokens_encode(vocab_dir: str, text_path: str, mode: str = "whole"):
    """fastokens: `encode_batch_flat` of the lines, or of the whole text as one item (its fastest way to
    an id array); its threads are RAYON_NUM_THREADS, set by the suite in this worker."""
    flat = fastokens_file(vocab_dir).encode_batch_flat
    data = _texts(text_path, mode)
    return (lambda: flat([data])) if mode == "whole" else (lambda: flat(data))


def describe_vocab(vocab_dir: str) -> dict:
    """Size and kind of a saved vocabulary, read from its tokenizer.json (for the report)."""
    with open(os.path.join(vocab_dir, "tokenizer.json"), encoding="utf-8") as f:
        data = json.load(f)
    return {"model": data["model"]["type"], "vocab_size": len(data["model"]["vocab"])}
