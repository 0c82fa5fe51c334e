"""Vocabularies as the models hold them: tokens by id (None at an unused id), read from {token: id}.

>>> vocab_from_mapping({"[UNK]": 0, "a": 1, "ab": 3}, "v.json")
['[UNK]', 'a', None, 'ab']
>>> detect_kind(["[UNK]", "a</w>", "b"], "vocab.json")
'bpe'
"""
from __future__ import annotations

from tokkit._native.byte_symbols import bytes_to_unicode
from tokkit.errors import TokkitError

BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
MAX_ID = 2**31 - 1  # ids are int32 in the encoders' outputs
HOLES_PER_TOKEN = 16  # a vocabulary list by id is made as long as its highest id: a few unused ids, not millions


def vocab_from_mapping(mapping: dict, where: str) -> list[str | None]:
    """Turn {token: id} into a list by id. Ids may leave gaps (None there), as tokenizers allows
    (OpenAI-style files leave ids unused below their special tokens); no id may be given twice.

    >>> vocab_from_mapping({"a": 0, "b": 0}, "v.json")
    Traceback (most recent call last):
    tokkit.errors.TokkitError: v.json: id 0 is given to both 'a' and 'b'
    """
    if not isinstance(mapping, dict) or not mapping:
        raise TokkitError(f"{where}: expected a non-empty object of token -> id")
    ids = list(mapping.values())
    if ids == list(range(len(ids))):  # ids in order without holes, as tokenizers writes them
        return list(mapping)
    for token, idx in mapping.items():
        if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < MAX_ID:
            raise TokkitError(f"{where}: token {token!r} has id {idx!r}; ids must be integers from 0 to {MAX_ID - 1}")
    size = max(mapping.values()) + 1
    if size > HOLES_PER_TOKEN * len(mapping):
        raise TokkitError(f"{where}: ids run to {size - 1:,} for {len(mapping):,} tokens; tokkit reads "
                          f"vocabularies whose ids leave at most {HOLES_PER_TOKEN - 1} unused per token")
    vocab: list[str | None] = [None] * size
    for token, idx in mapping.items():
        if vocab[idx] is not None:
            raise TokkitError(f"{where}: id {idx} is given to both {vocab[idx]!r} and {token!r}")
        vocab[idx] = token
    return vocab


def token_ids(vocab) -> dict[str, int]:
    """{token: id} of a vocabulary by id, in id order (unused ids left out).

    >>> token_ids(["a", None, "c"])
    {'a': 0, 'c': 2}
    """
    if None not in vocab:  # the usual vocabulary, without holes: one pass in C
        return dict(zip(vocab, range(len(vocab))))
    return {tok: i for i, tok in enumerate(vocab) if tok is not None}


def check_merge(pair: tuple[str, str], known, where: str) -> None:
    """Both sides of a merge and what it makes must be tokens (tokenizers' check at load).

    >>> check_merge(("a", "b"), {"a", "b"}, "merges.txt: line 2")
    Traceback (most recent call last):
    tokkit.errors.TokkitError: merges.txt: line 2: merge 'a b' makes 'ab', which is not in the vocabulary
    """
    for side in pair:
        if side not in known:
            raise TokkitError(f"{where}: merge {' '.join(pair)!r} names unknown token {side!r}")
    if pair[0] + pair[1] not in known:
        raise TokkitError(f"{where}: merge {' '.join(pair)!r} makes {pair[0] + pair[1]!r}, which is not in the vocabulary")


def detect_kind(vocab: list[str | None], where: str) -> str:
    """A vocab.json's BPE kind: `</w>` tokens mean char BPE; the full GPT-2 byte alphabet means bytelevel."""
    if any(tok and tok.endswith("</w>") for tok in vocab):
        return "bpe"
    if set(bytes_to_unicode()) <= set(vocab):
        return "bytelevel"
    raise TokkitError(f"{where}: cannot tell the BPE kind (no '</w>' tokens and not the full byte alphabet); "
                      "pass kind='bpe' or kind='bytelevel'")
