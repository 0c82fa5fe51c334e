"""The general path's memos are bounded in bytes: streaming unique text without spaces through one
tokenizer grows the process by at most the documented bound (two memos of 32 MiB per encoding
thread, tokkit/_native/vocab_tables.hpp's TokenMemo), whatever the stream's length."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_memo_memory import build, measure  # noqa: E402

MEMO_MIB = 32          # TokenMemo's max_bytes
MEMOS_PER_THREAD = 2   # the pieces' memo and the fast lane's chunks
BATCH_SLACK_MIB = 32   # one 1 MB batch's text, ids and scratch buffers


@pytest.fixture(scope="module")
def tokenizers_built(tmp_path_factory):
    return build(tmp_path_factory.mktemp("memo"))


@pytest.mark.parametrize("name", ["unigram-metaspace", "bytelevel-nfc"])
def test_streaming_unique_text_keeps_memory_within_the_memo_bound(tokenizers_built, name):
    got = measure(tokenizers_built[name], mb=20, batch_kb=1024, threads=1)
    assert got["mb"] >= 20 and got["ids"] > 0
    grown = max(got["end_mb"], got["peak_mb"]) - got["base_mb"]
    # unbounded memos kept about 23 bytes per char of such text: 460 MB here
    assert grown <= MEMO_MIB * MEMOS_PER_THREAD + BATCH_SLACK_MIB, got
