"""The numpy encode benchmark's helpers: the corpus slice it reads in place, its plan and its tables."""
import pytest

from tokkit.bench.encode_numpy import KINDS, WARMUP, markdown, plan, read_corpus


def test_read_corpus_takes_sorted_files_and_cuts_at_a_line_end(tmp_path):
    (tmp_path / "b.txt").write_text("third line\nfourth\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("first é\nsecond\n", encoding="utf-8")
    (tmp_path / "skip.md").write_text("not a text file\n", encoding="utf-8")
    assert read_corpus(str(tmp_path), 10_000) == "first é\nsecond\nthird line\nfourth\n"
    assert read_corpus(str(tmp_path), 20) == "first é\nsecond\n"  # 20 bytes end inside "third line"


def test_plan_names_every_target_and_the_before_tree_only_when_given():
    vocab = {"bytelevel": "bl", "wordpiece": "wp", "bpe": "cb"}
    groups = plan(vocab, "corpus", 1000, None)
    assert [g[0].split(":")[0] for g in groups] == ["bytelevel 50,257", "bytelevel 50,257", "bytelevel 50,257",
                                                    "wordpiece 30,000", "char bpe 32,000", "wordpiece 30,000"]
    fresh = [c for g, _, _, c in groups if "new str" in g][0]
    assert all(kw["api"] == "fresh" and kw["calls"] == 3 + WARMUP for _, _, kw, _ in fresh.values())
    assert all(target for _, _, target, _ in groups)
    assert not any("before" in name for *_, c in groups for name in c)
    with_old = plan(vocab, "corpus", 1000, "/old/tree", "/tmp/slice.txt")
    olds = [c["tokkit (before)"] for *_, c in with_old if "tokkit (before)" in c]
    assert len(olds) == 4 and all(is_old and kw["text_path"] == "/tmp/slice.txt" for _, _, kw, is_old in olds)


def test_markdown_gives_speed_relative_to_the_first_row_and_the_kinds():
    rows = [{"group": "g", "name": "tokkit a", "baseline": True, "times": [2.0], "median": 2.0, "throughput": 5.0,
             "target": "t"},
            {"group": "g", "name": "gigatoken b", "baseline": False, "times": [1.0], "median": 1.0,
             "throughput": 10.0, "time_ratio": 2.0},
            {"group": "g", "name": "tokie c", "baseline": False, "times": [], "note": "skipped: tokie is not installed"}]
    text = markdown(rows)
    assert "**g** (target: t)" in text
    assert "| gigatoken b | 1.000 | 10.0 | 2.00x | " + KINDS["gigatoken"] + " |" in text
    assert "skipped: tokie is not installed" in text


def test_fresh_copies_are_new_objects_with_the_same_text():
    from tokkit.bench.encode_numpy import fresh_copies

    text = "héllo wörld " * 10
    take = fresh_copies(text, 2)
    a, b = take(), take()
    assert a == b == text and a is not b and a is not text
    with pytest.raises(RuntimeError, match="fresh copies"):
        take()
