"""A tiktoken rank file (`cl100k_base.tiktoken`, Llama 3's `original/tokenizer.model`) as a tokenizer.json.

A rank file holds one `base64(token bytes) rank` line per token and nothing else: the split pattern
and the special tokens are the encoding's, not the file's. `tokkit.load(path, pattern=...)` takes
them by name or as a regex; without one they are inferred from the number of ranks for the
encodings that ship so (r50k/p50k, cl100k, o200k, Llama 3). The file becomes the pipeline that
encodes as tiktoken does: Split(pattern) + ByteLevel, a BPE whose merges are every split of a token
into two tokens, ordered by the rank of the token they make, and `ignore_merges` (tiktoken takes a
piece that is a token as it is).

>>> ranks = {b"a": 0, b"b": 1, b"ab": 2}
>>> model = tokenizer_json_from_ranks(ranks, pattern="gpt2", specials={})["model"]
>>> model["merges"], model["ignore_merges"]
([['a', 'b']], True)
"""
from __future__ import annotations

import binascii
import re
from operator import itemgetter
from pathlib import Path

from tokkit._native.byte_symbols import bytes_to_unicode, unicode_to_bytes
from tokkit._native.patterns import NAMED
from tokkit.errors import TokkitError

_RANK_LINE = re.compile(rb"[A-Za-z0-9+/]+={0,2} [0-9]+\r?\n")
_LINE = re.compile(rb"([A-Za-z0-9+/]+={0,2}) ([0-9]{1,9})\s*")

# The encodings whose rank files ship without their pattern: rank count -> (pattern, special tokens).
_LLAMA3_SPECIALS = (["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                     "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
                     "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"]
                    + [f"<|reserved_special_token_{i}|>" for i in range(3, 248)])
KNOWN = {
    50256: ("gpt2", {"<|endoftext|>": 50256}),  # r50k_base
    50280: ("gpt2", {"<|endoftext|>": 50256}),  # p50k_base
    100256: ("cl100k", {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                        "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}),
    199998: ("o200k", {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
    128000: ("llama3", {name: 128000 + i for i, name in enumerate(_LLAMA3_SPECIALS)}),  # Llama 3.1's names
}


def is_rank_file(path: Path) -> bool:
    """Whether a file starts as a rank file does (a SentencePiece .model is protobuf, never so)."""
    with open(path, "rb") as f:
        head = f.read(512)
    return _RANK_LINE.match(head) is not None


def read_ranks(path: Path) -> dict:
    """token bytes -> rank, every line checked; one error naming the file and line otherwise."""
    ranks: dict = {}
    with open(path, "rb") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        match = _LINE.fullmatch(line)
        if match is None:
            if not line.strip():
                continue
            raise TokkitError(f"{path}: line {number} is not 'base64-token rank' (a rank below 10**9)")
        try:
            token = binascii.a2b_base64(match[1])
        except binascii.Error:
            raise TokkitError(f"{path}: line {number}: the token is not base64") from None
        if not token or token in ranks:
            raise TokkitError(f"{path}: line {number}: the token is {'empty' if not token else 'listed twice'}")
        ranks[token] = int(match[2])
    if not ranks:
        raise TokkitError(f"{path}: holds no ranks")
    if len(set(ranks.values())) != len(ranks):
        raise TokkitError(f"{path}: two tokens share a rank")
    return ranks


def tokenizer_json_from_rank_file(path: Path, *, pattern: str | None = None, specials=None) -> dict:
    """The tokenizer.json object of a rank file, with its pattern and specials named, given or inferred."""
    ranks = read_ranks(path)
    known = KNOWN.get(len(ranks))
    n_ids = max(ranks.values()) + 1
    if pattern is None and known is None:
        raise TokkitError(f"{path}: a rank file of {len(ranks)} tokens is no known encoding; give its split "
                          f"pattern: load(path, pattern=NAME or regex), NAME one of {', '.join(sorted(NAMED))}")
    pattern = pattern if pattern is not None else known[0]
    if specials is None:
        specials = known[1] if known is not None and NAMED.get(pattern) == NAMED[known[0]] else {}
    return tokenizer_json_from_ranks(ranks, pattern=pattern, specials=_special_ids(specials, n_ids, path))


def _special_ids(specials, n_ranks: int, path: Path) -> dict:
    """Special tokens as token -> id: a mapping as given, a list numbered after the ranks."""
    if isinstance(specials, dict):
        ids = dict(specials)
    else:
        ids = {token: n_ranks + i for i, token in enumerate(specials)}
    # (n_ranks: one past the highest rank, so a list of specials never lands on a token)
    for token, i in ids.items():
        if not isinstance(token, str) or not token or not isinstance(i, int) or isinstance(i, bool) or i < n_ranks:
            raise TokkitError(f"{path}: special token {token!r} -> {i!r}: a non-empty str at an id past the ranks "
                              f"(>= {n_ranks})")
    if len(set(ids.values())) != len(ids):
        raise TokkitError(f"{path}: two special tokens share an id")
    return ids


def tokenizer_json_from_ranks(ranks: dict, *, pattern: str, specials: dict) -> dict:
    """The tokenizer.json object (the `tokenizers` schema) that encodes with `ranks` as tiktoken does."""
    table = dict(enumerate(bytes_to_unicode()))  # latin-1 char -> its byte's symbol
    symbols = {token: token.decode("latin-1").translate(table) for token in ranks}
    vocab = {symbols[token]: rank for token, rank in ranks.items()}
    # The specials sit in the vocabulary too: an added token past it would be renumbered to the next
    # free id (as `tokenizers` does), and cl100k's and o200k's specials leave gaps.
    vocab.update(specials)
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for t, i in sorted(specials.items(), key=lambda x: x[1])],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": NAMED.get(pattern, pattern)}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                  "vocab": vocab, "merges": _merges(ranks, symbols)},
    }


def _merges(ranks: dict, symbols: dict) -> list:
    """Every split of a token into two tokens, by the rank of the token made, then of its parts."""
    merges = []
    for token, rank in ranks.items():
        splits = [(ranks[token[:i]], ranks[token[i:]], i) for i in range(1, len(token))
                  if token[:i] in ranks and token[i:] in ranks]
        if len(splits) > 1:
            splits.sort()
        merges.extend((rank, symbols[token[:i]], symbols[token[i:]]) for _, _, i in splits)
    merges.sort(key=itemgetter(0))  # stable: a token's splits keep the order of their parts' ranks
    return [[left, right] for _, left, right in merges]


def ranks_from_vocab(vocab: dict, specials=()) -> dict:
    """The ranks of a byte-level vocabulary (GPT-2 symbols -> id): each non-special token's bytes,
    ranked by its id, as a trainer numbers a merged token after its parts.

    >>> ranks_from_vocab({"a": 1, "Ġ": 2, "[PAD]": 0}, specials=["[PAD]"])
    {b'a': 1, b' ': 2}
    """
    to_byte, skip = unicode_to_bytes(), set(specials)
    return {bytes(to_byte[c] for c in token): i for token, i in vocab.items() if token not in skip}
