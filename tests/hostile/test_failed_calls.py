"""A call that fails half way leaves the tokenizer answering exactly as before.

Each thread's scratch (its memos of pieces and chunks, and the flag that a char met no token) is
kept from call to call. A batch whose first text held a char no token covers, in a model without
an unknown token, set that flag; when a later text of the same batch then failed (a pattern past
its time limit), the flag stayed set, and the next call on that scratch, on any text, failed with
"no unknown token". The tests record every answer first, make calls fail in every way a text can
make them fail, on one thread and several, and ask again.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import tokkit
from tokkit.errors import TokkitError

SLOW = "a" * 3000 + "!"  # "(a+)+$" backtracks without end on it: past the time limit


@pytest.fixture(autouse=True)
def short_time_limit(monkeypatch):
    from tokkit._native import regex_limit

    monkeypatch.setattr(regex_limit, "BASE_SECONDS", 0.05)


def _write(folder: Path, doc: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder


def _doc(pre_tokenizer, model) -> dict:
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": pre_tokenizer, "post_processor": None, "decoder": None, "model": model}


UNIGRAM_NO_UNK = {"type": "Unigram", "unk_id": None, "byte_fallback": False,
                  "vocab": [["a", -1.0], ["b", -1.5], ["ab", -2.0], ["!", -3.0], ["\u2581", -1.0], ["\u2581a", -1.2],
                            [" ", -2.0]]}
SLOW_SPLIT = {"type": "Split", "pattern": {"Regex": "(a+)+$"}, "behavior": "Isolated", "invert": False}
METASPACE = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
PROBES = ["ab", "a b", "ab!", "", "b a ab", "abab ab"]


def _answers(tok) -> list:
    """Everything the tokenizer says about the probes, on every entry point."""
    out = [tok.encode(t) for t in PROBES] + [tok.encode_with_offsets(t).offsets for t in PROBES]
    out.append(tok.encode_batch(PROBES, num_threads=1))
    for threads in (1, 2):
        ids, offsets = tok.encode_batch_flat(PROBES * 20, num_threads=threads)
        out.append((ids.tolist(), offsets.tolist()))
    return out


def _fail(call) -> None:
    with pytest.raises(TokkitError):
        call()


@pytest.mark.parametrize("pre_tokenizer", [SLOW_SPLIT, {"type": "Sequence", "pretokenizers": [METASPACE, SLOW_SPLIT]}],
                         ids=["split", "metaspace-then-split"])
def test_an_unknown_char_then_a_pattern_past_its_limit(tmp_path, pre_tokenizer):
    tok = tokkit.load(_write(tmp_path, _doc(pre_tokenizer, UNIGRAM_NO_UNK)))
    before = _answers(tok)
    for threads in (1, 2):
        _fail(lambda: tok.encode_batch(["?", SLOW], num_threads=threads))
        _fail(lambda: tok.encode_batch_flat(["ab", "?", "ab", SLOW] * 3, num_threads=threads))
    _fail(lambda: tok.encode("?" + SLOW))
    _fail(lambda: tok.encode_with_offsets("?"))
    assert _answers(tok) == before


def test_an_unknown_char_on_the_chunk_lane(tmp_path):
    tok = tokkit.load(_write(tmp_path, _doc(METASPACE, UNIGRAM_NO_UNK)))
    assert tok._encoder.fast_lane
    before = _answers(tok)
    for threads in (1, 2):
        _fail(lambda: tok.encode_batch_flat(["ab ab", "a ?", "b a"] * 5, num_threads=threads))
        _fail(lambda: tok.encode("ab ? ab"))
    assert _answers(tok) == before
    _fail(lambda: tok.encode("ab ?"))  # and what failed still fails


def test_a_byte_level_pattern_past_its_limit(tmp_path):
    """The byte-level fast path with a pattern of its own (split in Python, under the time limit)."""
    from tokkit._native.byte_symbols import bytes_to_unicode

    symbols = bytes_to_unicode()
    vocab = {s: i for i, s in enumerate(symbols)}
    vocab[symbols[ord("a")] * 2] = 256
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
             "vocab": vocab, "merges": [[symbols[ord("a")], symbols[ord("a")]]]}
    pre = {"type": "Sequence", "pretokenizers": [
        SLOW_SPLIT, {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    tok = tokkit.load(_write(tmp_path, _doc(pre, model)))
    before = _answers(tok)
    for threads in (1, 2):
        _fail(lambda: tok.encode_batch_flat(["aa b", SLOW, "ab"] * 3, num_threads=threads))
    _fail(lambda: tok.encode_with_offsets(SLOW))
    assert _answers(tok) == before


def test_tokkit_encode_that_refuses_a_pair_leaves_the_tokenizer_as_it_was(tmp_path, wp):
    before = _answers(wp)
    _fail(lambda: tokkit.encode(wp, ["the cat"], ["the dog sat on the mat"], max_length=6, truncation="only_first"))
    assert _answers(wp) == before
