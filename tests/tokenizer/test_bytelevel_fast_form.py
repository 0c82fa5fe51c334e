"""Byte-level Hub files on the fast path: scanned Split patterns, NFC and ignore_merges against tokenizers.

ModernBERT/OLMo (NFC), Llama 3 (cl100k Split, ignore_merges), Qwen2 (NFC, Qwen2's Split) and o200k
files take the fast byte-level encoder; texts NFC may change go to the general path. Every call
is checked against `tokenizers` on texts that mix NFC and non-NFC text, scripts, emoji and
whitespace runs, as one text and in batches where such texts sit among plain ones.
"""
from __future__ import annotations

import random
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokkit._native.encode import texts_nfc_may_change
from tokkit._native.pipeline_tables import NFC_ALWAYS, NFC_FIRST, NFC_SECOND, nfc_table

FAST_KINDS = ("modernbert", "llama3", "qwen2", "o200k")
PIECES = ["a", "Word", "HELLOworld", "naïve", "e\u0301", "\u0301", "e\u0301\u0323", "\u1100\u1161", "\uac00\u11a8",
          "\u212b", "\u0915\u094d", "\u0634\u0651\u064e", "\u09c7\u09be", " ", "  ", "\t", "\n", "\r\n", "'s", "'LL",
          "12345", "中文", "👍🏽", "👨\u200d👩", "don't", "/\n", "?!", "\u00a0", "x" * 20,
          # added tokens of the files, and what NFC joins to their ends or turns into their chars
          "<|endoftext|>", "[CLS]", "<|im_start|>", "\u0338", "\u0338\u0301", "\u212a", "<"]
MIXED = st.lists(st.sampled_from(PIECES), max_size=16).map("".join)


@pytest.fixture(scope="module", params=FAST_KINDS)
def hub_pair(request, tmp_path_factory):
    import tokenizers
    from helpers.hub_files import hub_folder

    import tokkit
    folder = hub_folder(request.param, tmp_path_factory)
    return request.param, tokkit.load(folder), tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))


def test_these_files_take_the_fast_path(hub_pair):
    from tokkit.tokenizer.plan import plan

    kind, tok, _ = hub_pair
    the_plan = plan(tok.spec)
    assert the_plan.engine == tok.spec.kind == "bytelevel"
    assert the_plan.nfc == (kind in ("modernbert", "qwen2"))
    assert the_plan.form.ignore_merges == tok.spec.pipeline.model.ignore_merges == (kind == "llama3")
    assert tok._encoder.__class__.__name__ == ("NfcEncoder" if the_plan.nfc else "Encoder")


@settings(max_examples=120, deadline=None)
@given(text=MIXED)
def test_ids_and_offsets_equal_tokenizers(hub_pair, text):
    _, tok, hf = hub_pair
    want = hf.encode(text, add_special_tokens=False)
    assert tok.encode(text) == want.ids
    assert tok.encode_to_numpy(text).tolist() == want.ids
    got = tok.encode_with_offsets(text)
    assert got.ids == want.ids and got.offsets == want.offsets


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(MIXED, min_size=1, max_size=8))
def test_batches_mixing_nfc_and_other_texts(hub_pair, texts):
    _, tok, hf = hub_pair
    want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert tok.encode_batch(texts, num_threads=1) == want
    ids, ptr = tok.encode_batch_flat(texts, num_threads=1)
    assert [ids[ptr[k]:ptr[k + 1]].tolist() for k in range(len(texts))] == want
    import tokkit
    enc = tokkit.encode(tok, texts, return_offsets=True, padding=None, truncation=None, num_threads=1)
    wanted = hf.encode_batch(texts)  # with the file's post-processor, as tokkit.encode adds it
    for k, e in enumerate(wanted):
        assert np.asarray(enc["input_ids"][k]).tolist() == e.ids
        assert [tuple(o) for o in np.asarray(enc["offsets"][k]).tolist()] == e.offsets


def test_ignore_merges_emits_whole_pieces(tmp_path_factory):
    import tokenizers
    from helpers.hub_files import hub_folder

    import tokkit
    folder = hub_folder("llama3", tmp_path_factory)  # the one kind that sets ignore_merges
    tok, hf = tokkit.load(folder), tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    vocab = hf.get_vocab()
    # pieces that are tokens of their own: with ignore_merges each is one id, whatever the merges say
    words = [w for w in vocab if w.startswith("Ġ") and len(w) > 3][:200]
    text = "".join(" " + w[1:] for w in words if "Ġ" not in w[1:])
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids


# ------------------------------------------------------------------------------ the NFC check
def reference_nfc_may_change(text: str, table: np.ndarray) -> bool:
    """The compiled scan, spelled out."""
    after_first, prev = False, 0
    for ch in text:
        v = int(table[ord(ch)])
        ccc = v & 0xFF
        if v & NFC_ALWAYS or (ccc and prev > ccc) or (v & NFC_SECOND and after_first):
            return True
        if not ccc:
            after_first = bool(v & NFC_FIRST)
        prev = ccc
    return False


def interesting_chars() -> list[str]:
    table = nfc_table()
    flagged = [chr(c) for c in np.flatnonzero(table).tolist() if not 0xD800 <= c < 0xE000]
    rng = random.Random(0)
    return rng.sample(flagged, 400) + list("aeiouAEIOU \u0915\u0634\u09c7\u1100\uac00日") + ["\u0301", "\u0323"]


CHARS = interesting_chars()


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(CHARS), max_size=6).map("".join))
def test_a_text_the_scan_passes_is_its_own_nfc(text):
    table = nfc_table()
    flagged = texts_nfc_may_change(["\u0100" + text], 0, 1, table) == [0]  # "\u0100": a 2-byte str
    assert flagged == reference_nfc_may_change("\u0100" + text, table)
    if unicodedata.normalize("NFC", text) != text and all(unicodedata.category(c) != "Cn" for c in text):
        assert flagged  # what Python's (older) Unicode changes, the scan sends to the general path


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(CHARS + [" ", "a", "<", ">"]), max_size=24).map("".join))
def test_normalizing_the_windows_is_normalizing_the_text(modernbert_general, text):
    from tokkit._native.encode import nfc_windows

    general = modernbert_general
    parts, at = [], 0
    for a, b in nfc_windows(text, nfc_table()):
        assert 0 <= at <= a < b <= len(text)
        parts += [text[at:a], general.inspect(text[a:b], False)[0][0]]
        at = b
    assert "".join(parts) + text[at:] == (general.inspect(text, False)[0][0] if text else "")


@pytest.fixture(scope="module")
def modernbert_general(tmp_path_factory):
    from helpers.hub_files import hub_folder

    import tokkit
    from tokkit.tokenizer.encoders import general_encoder
    return general_encoder(tokkit.load(hub_folder("modernbert", tmp_path_factory)).spec, False)


def test_the_scan_agrees_with_the_general_paths_nfc(tmp_path_factory):
    from helpers.hub_files import hub_folder

    import tokkit
    from tokkit.tokenizer.encoders import general_encoder
    general = general_encoder(tokkit.load(hub_folder("modernbert", tmp_path_factory)).spec, False)
    table = nfc_table()
    rng = random.Random(1)
    for _ in range(20000):
        text = "\u0100" + "".join(rng.choice(CHARS) for _ in range(rng.randint(1, 6)))
        if not texts_nfc_may_change([text], 0, 1, table):
            assert general.inspect(text, False)[0][0] == text, [hex(ord(c)) for c in text]
