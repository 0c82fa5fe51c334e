"""The patterns benchmark's plumbing: its text, the five byte-level files, the ids check and the table.

The end-to-end check trains the five kinds at 400 tokens on 0.2 MB and compares ids on 0.1 MB of the
benchmark's text (seconds, nothing timed); it needs the shared corpus and tokenizers.
"""
import importlib.util
import json

import numpy as np
import pytest
from helpers.paths import SHARED, needs_corpus

from tokkit.bench.pattern_files import KINDS, build_files, training_prefix
from tokkit.bench.pattern_suite import (FASTOKENS, GIGATOKEN, TIKTOKEN, TOKENIZERS, TOKKIT, bench_text, check_files,
                                        differing_lines, ids_line, plan, table, text_mb, tiktoken_encoding)
from tokkit.bench.registry import SUITES, names as suite_names

needs_tokenizers = pytest.mark.skipif(importlib.util.find_spec("tokenizers") is None, reason="needs tokenizers")


def fake_corpus(root):
    """wiki 000-019 (training) and 080-081, and one file in each multilingual folder."""
    (root / "en" / "wiki").mkdir(parents=True)
    for i in list(range(20)) + [80, 81]:
        (root / "en" / "wiki" / f"{i:03d}.txt").write_text(f"wiki {i:03d} line\n\n" * 50, encoding="utf-8")
    for name, line in (("tatoeba", "Hallo Welt."), ("ko_wikipedia", "한국어 문장"), ("ja_aozora", "吾輩は猫である"),
                       ("zh_gutenberg", "红楼梦")):
        (root / "multilingual" / name).mkdir(parents=True)
        (root / "multilingual" / name / "a.txt").write_text(f"{line}\n" * 100, encoding="utf-8")
    return root


def test_bench_text_is_held_out_wiki_then_every_multilingual_folder(tmp_path):
    root = fake_corpus(tmp_path)
    text = bench_text(str(root), 1000)
    wiki, rest = text[: text.index("Hallo")], text[text.index("Hallo"):]
    assert wiki.startswith("wiki 080") and "wiki 000" not in text and wiki.endswith("\n")
    assert all(word in rest for word in ("Hallo", "한국어", "吾輩", "红楼梦"))
    assert len(wiki.encode()) <= 800 and 900 < text_mb(text) * 1e6 <= 1000


def test_training_prefix_is_cut_at_a_line_end(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("one\ntwo\n")
    b.write_text("three\nfour\n")
    assert training_prefix([str(a), str(b)], 12) == ["one", "two"]
    assert training_prefix([str(a), str(b)], 100) == ["one", "two", "three", "four"]


def test_plan_gives_tiktoken_to_the_files_without_a_normalizer_it_can_run():
    groups = plan({k: f"/files/{k}" for k in KINDS}, "corpus", 1000)
    names = {kind: list(tasks) for _, kind, tasks in groups}
    assert names["o200k"] == names["llama3"] == [TOKKIT, GIGATOKEN, FASTOKENS, TOKENIZERS, TIKTOKEN]
    assert names["gpt2"] == names["modernbert"] == names["qwen2"] == [TOKKIT, GIGATOKEN, FASTOKENS, TOKENIZERS]
    assert "patterns" in SUITES and SUITES["patterns"].description and "patterns" not in suite_names("all")


def test_a_mismatch_is_counted_by_line_and_said_loudly():
    ours, theirs = (lambda t: [len(t)]), (lambda t: [len(t) + (t == "b c")])
    found = differing_lines(ours, theirs, TIKTOKEN, "a\nb c\n\nd\n")
    assert found == {"differing_lines": 1, "lines": 3, "first_line": 1, "first_text": "b c"}
    line = ids_line("o200k", {TOKENIZERS: {"identical": True},
                              TIKTOKEN: {"identical": False, **found},
                              GIGATOKEN: {"identical": None, "note": "gigatoken is not installed"}})
    assert line == ("o200k: ids identical to tokkit's: tokenizers yes, tiktoken NO (1 of 3 lines differ, first: "
                    "line 1), gigatoken not checked: gigatoken is not installed  <-- MISMATCH")


def test_table_gives_each_contenders_speed_and_tokkits_speed_up_against_its_target():
    rows = [{"kind": "llama3", "name": TOKKIT, "baseline": True, "times": [1.0], "throughput": 100.0},
            {"kind": "llama3", "name": GIGATOKEN, "times": [1.0], "throughput": 125.0, "speedup": 0.8},
            {"kind": "llama3", "name": FASTOKENS, "times": [1.0], "throughput": 90.0, "speedup": 1.11},
            {"kind": "llama3", "name": TOKENIZERS, "times": [1.0], "throughput": 40.0, "speedup": 2.5},
            {"kind": "llama3", "name": TIKTOKEN, "times": [], "note": "skipped: tiktoken is not installed"}]
    last = table(rows).splitlines()[-1]
    assert last == ("| llama3 | 100.0 | 125.0 (tokkit 0.80x, >= 1x MISSED) | 90.0 (tokkit 1.11x, >= 1x met) | "
                    "40.0 (tokkit 2.50x, >= 1x met) | skipped: tiktoken is not installed |")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return build_files(str(SHARED), str(tmp_path_factory.mktemp("patterns")), vocab_size=400, train_mb=0.2,
                       log=lambda m: None)


@pytest.mark.corpus
@needs_corpus
@needs_tokenizers
def test_tokkit_ids_equal_tokenizers_on_every_kind(files):
    text = bench_text(str(SHARED), 100_000)
    assert any(ord(c) > 0x3000 for c in text)  # the multilingual part is there
    checks = check_files(files, text, log=lambda m: None)
    assert list(checks) == list(KINDS)
    for kind, check in checks.items():
        assert check[TOKENIZERS]["identical"] is True, (kind, check[TOKENIZERS])
        assert (TIKTOKEN in check) == (kind in ("llama3", "o200k"))


@pytest.mark.corpus
@needs_corpus
@pytest.mark.skipif(importlib.util.find_spec("tiktoken") is None, reason="needs tiktoken")
def test_tiktoken_ranks_are_the_files_ids_without_its_specials(files):
    enc = tiktoken_encoding(files["o200k"], "o200k")
    with open(f"{files['o200k']}/tokenizer.json", encoding="utf-8") as f:
        spec = json.load(f)
    assert enc.n_vocab == len(spec["model"]["vocab"])
    assert len(enc.encode_ordinary("<|endoftext|>")) > 1  # the special's text is no mergeable token
    ids = np.asarray(enc.encode_ordinary("Hello world"))
    inverse = {i: t for t, i in spec["model"]["vocab"].items()}
    assert "".join(inverse[i] for i in ids.tolist()) == "HelloĠworld"
