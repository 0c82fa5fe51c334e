"""Pre-split words for `tokkit.encode(..., is_split_into_words=True)`: each word encoded on its own.

As `tokenizers` does with `is_pretokenized=True`, every word goes through the normalizer,
pre-tokenizer and model by itself; all its tokens carry the word's index in its row, and their
offsets count characters within the word. A byte-level tokenizer whose pre-tokenizer adds no space
of its own reads each word as if a space came before it (as transformers' GPT-2 and RoBERTa
tokenizers do with `add_prefix_space=True`, which they require for split words), so that a word
gets the tokens it has inside a sentence. Metaspace tokenizers already prepend `▁` to each word
under their own `prepend_scheme` ("first" and "always" do: every word starts its own text).

>>> check_word_rows([["New", "York"], ()], "texts")
[['New', 'York'], ()]
>>> regroup_words({"ids": np.arange(4, dtype=np.int32), "words": np.zeros(4, np.int32),
...                "ptr": np.array([0, 1, 3, 4])}, np.array([2, 1]))["words"].tolist()
[0, 1, 1, 0]
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from tokkit.tokenizer import Tokenizer
from tokkit.tokenizer.pre_tokenizers import ByteLevel
from tokkit.tokenizer.pre_tokenizers import Sequence as PreTokenizerSequence
from tokkit.tokenizer.prefix_space import spaced, unshift


def check_word_rows(rows, name: str) -> list:
    """`rows` as a list of word lists; anything else is a TypeError naming the row (and word)."""
    if isinstance(rows, str):
        raise TypeError(f"{name} must be a sequence of word lists with is_split_into_words=True, not a single str")
    rows = list(rows)
    for i, row in enumerate(rows):
        if isinstance(row, str) or not isinstance(row, (list, tuple)):
            raise TypeError(f"{name}[{i}] must be a list of words (str) with is_split_into_words=True, "
                            f"not {type(row).__name__}")
        if not all(isinstance(w, str) for w in row):
            j = next(j for j, w in enumerate(row) if not isinstance(w, str))
            raise TypeError(f"{name}[{i}][{j}] must be str, not {type(row[j]).__name__}")
    return rows


def adds_word_space(tokenizer: Tokenizer) -> bool:
    """Whether split words need a space put before them: a byte-level pre-tokenizer without
    `add_prefix_space` would otherwise read each word as the start of a text.

    >>> adds_word_space(Tokenizer.from_trained(kind="bytelevel", vocab=["a"], merges=[], special_tokens=[]))
    True
    >>> adds_word_space(Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "a"], merges=None,
    ...                                        special_tokens=["[UNK]"]))
    False
    """
    return _byte_level_without_space(tokenizer.spec.pipeline.pre_tokenizer)


def _byte_level_without_space(pre) -> bool:
    if isinstance(pre, ByteLevel):
        return not pre.add_prefix_space
    if isinstance(pre, PreTokenizerSequence):
        parts = [p for p in pre.pretokenizers if isinstance(p, (ByteLevel, PreTokenizerSequence))]
        return bool(parts) and all(_byte_level_without_space(p) for p in parts)
    return False


def word_texts(tokenizer: Tokenizer, rows: Sequence[Sequence[str]]) -> tuple[list[str], np.ndarray, dict | None]:
    """Every row's words in one flat list (spaced when `adds_word_space`), the number of words per
    row, and where spaces went in (None when none did).

    A space goes before each part of a word between added tokens, as tokenizers' ByteLevel
    `add_prefix_space` puts it: before the whole word, except in the rare word that holds an added
    token (those alone pay for a pattern scan).
    """
    counts = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    words = [w for r in rows for w in r]
    if not adds_word_space(tokenizer):
        return words, counts, None
    texts = [" " + w if w and w[0] != " " else w for w in words]
    lead = np.fromiter((bool(w) and w[0] != " " for w in words), dtype=bool, count=len(words))
    added = _added_pattern(tokenizer)
    odd = {}
    for k in ([k for k, w in enumerate(words) if added.search(w)] if added is not None else ()):
        texts[k], odd[k] = spaced(words[k], [m.span() for m in added.finditer(words[k])])
        lead[k] = False
    return texts, counts, {"lead": lead, "odd": odd}


def _added_pattern(tokenizer: Tokenizer) -> re.Pattern | None:
    """The added tokens the encoder matches in text, longest first (as PrefixSpaceEncoder splits on them)."""
    names = {a.content for a in tokenizer.spec.added if not (tokenizer.split_special_tokens and a.special)}
    return re.compile("|".join(map(re.escape, sorted(names, key=len, reverse=True)))) if names else None


def regroup_words(flat: dict, counts: np.ndarray, spaces: dict | None = None) -> dict:
    """Encoded words (one flat row each) -> encoded rows: the same tokens, row pointers over whole
    rows, word ids counting each row's words from 0, and offsets within each word (a space put
    before a word counts as part of the character after it, as tokkit.tokenizer.prefix_space has it)."""
    word_ptr = flat["ptr"]
    tokens_per_word = np.diff(word_ptr)
    first_word = np.concatenate([[0], np.cumsum(counts)])
    word_row = np.repeat(np.arange(counts.size), counts)
    index_in_row = np.arange(tokens_per_word.size) - first_word[word_row]
    out = dict(flat)
    out["words"] = np.repeat(index_in_row, tokens_per_word).astype(np.int32)
    out["ptr"] = word_ptr[first_word]
    if spaces is not None and "starts" in flat:
        out["starts"], out["ends"] = _unspaced(flat, spaces)
    return out


def _unspaced(flat: dict, spaces: dict) -> tuple[np.ndarray, np.ndarray]:
    starts, ends = flat["starts"].astype(np.int64), flat["ends"].astype(np.int64)
    lead = np.repeat(spaces["lead"], np.diff(flat["ptr"]))
    starts, ends = starts - (lead & (starts > 0)), ends - (lead & (ends > 1))  # unshift with one space at 0
    for k, where in spaces["odd"].items():
        a, b = flat["ptr"][k], flat["ptr"][k + 1]
        starts[a:b], ends[a:b] = unshift(starts[a:b], ends[a:b], np.array(where, dtype=np.int64))
    return starts.astype(np.int32), ends.astype(np.int32)
