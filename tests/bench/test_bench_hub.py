"""The hub benchmark's plumbing: its text, the Hub-style files it builds, the ids check, targets and tables.

The end-to-end test runs every contender once on ~20 kB (no timing assertions), with tokkit also on
a BERT WordPiece file; it needs the shared corpus and sentencepiece, transformers and tokenizers.
"""
import importlib.util
import json
import shutil

import numpy as np
import pytest
from helpers.cli import run_cli
from helpers.paths import SHARED, needs_corpus

from tokkit.bench.harness import Result
from tokkit.bench.hub_files import (MODEL_NAMES, build_files, check_file, folder_name, fraction_lines, hub_ids,
                                    training_files, vocab_size_of)
from tokkit.bench.hub_suite import (REFERENCE, TARGET, TOKKIT, Encoding, bench_lines, corpus_root, fingerprint,
                                    id_remarks, lines_mb, mark_targets, markdown, run_suite, split_flat)
from tokkit.bench.report import group_rows
from tokkit.bench.registry import SUITES, names
from tokkit.errors import TokkitError

BUILD_NEEDS = ("sentencepiece", "transformers", "tokenizers", "google.protobuf")


def missing(modules):
    out = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # google.protobuf without google
            found = False
        out += [] if found else [name]
    return out


needs_builders = pytest.mark.skipif(bool(missing(BUILD_NEEDS)),
                                    reason=f"needs {', '.join(missing(BUILD_NEEDS)) or 'nothing'}")


# ------------------------------------------------------------------------------ text and ids
def fake_corpus(root):
    """A tiny corpus in the shared layout: wiki 000-019 (training) and 020-021, Tatoeba, Korean Wikipedia."""
    (root / "en" / "wiki").mkdir(parents=True)
    for i in range(22):
        (root / "en" / "wiki" / f"{i:03d}.txt").write_text(f"wiki {i:03d} first line\n\nwiki {i:03d} line two\n" * 20)
    for lang in ("deu", "fra"):
        (root / "multilingual" / "tatoeba").mkdir(parents=True, exist_ok=True)
        (root / "multilingual" / "tatoeba" / f"tatoeba.{lang}-eng.{lang}").write_text(
            "".join(f"{lang} sentence {k}\n" for k in range(100)))
    (root / "multilingual" / "ko_wikipedia").mkdir(parents=True, exist_ok=True)
    (root / "multilingual" / "ko_wikipedia" / "wiki_00.txt").write_text("한국어 문장입니다.\n" * 50)
    return root


def test_bench_lines_take_held_out_wiki_for_half_then_every_tatoeba_file(tmp_path):
    root = fake_corpus(tmp_path)
    lines = bench_lines(str(root), 2000)
    wiki = [x for x in lines if x.startswith("wiki")]
    assert wiki and all(x.startswith(("wiki 021", "wiki 020")) for x in wiki)  # 000-019 train the files
    assert wiki[0].startswith("wiki 021")  # the highest-numbered file first
    assert sum(len(x) + 1 for x in wiki) <= 1000
    assert any(x.startswith("deu") for x in lines) and any(x.startswith("fra") for x in lines)
    assert all(x.strip() for x in lines) and 1000 < lines_mb(lines) * 1e6 <= 2000


def test_fraction_lines_keep_the_same_share_of_each_file_cut_at_line_ends(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("".join(f"a{k:03d}\n" for k in range(100)))  # 500 bytes
    b.write_text("".join(f"b{k:03d}\n" for k in range(300)))  # 1500 bytes
    half = fraction_lines([str(a), str(b)], 1000)
    assert half == [f"a{k:03d}" for k in range(50)] + [f"b{k:03d}" for k in range(150)]
    assert len(fraction_lines([str(a), str(b)], None)) == 400


def test_training_files_name_what_is_missing(tmp_path):
    root = fake_corpus(tmp_path)
    assert len(training_files(str(root))) == 20 + 2 + 1
    shutil.rmtree(root / "multilingual" / "ko_wikipedia")
    with pytest.raises(TokkitError, match="ko_wikipedia"):
        training_files(str(root))


def test_hub_ids_apply_fairseqs_offset_to_xlmr_only():
    assert hub_ids("xlmr", [0, 3, 5]) == [3, 4, 6] and hub_ids("llama", [0, 3, 5]) == [0, 3, 5]
    assert folder_name("xlmr", 16000, 4.0) == "xlmr-16000-4mb" and folder_name("llama", 8, None) == "llama-8-full"


def test_split_flat_reads_boundaries_and_lengths_alike():
    by_bounds = split_flat(np.array([1, 2, 3, 4]), np.array([0, 1, 1, 4]), 3)
    by_lengths = split_flat(np.array([1, 2, 3, 4], dtype=np.uint32), np.array([1, 0, 3], dtype=np.uint64), 3)
    assert [x.tolist() for x in by_bounds] == [x.tolist() for x in by_lengths] == [[1], [], [2, 3, 4]]


def test_encoding_fingerprints_its_first_run_once_and_keeps_nothing_after():
    calls = []
    work = Encoding(lambda: calls.append(1) or [[len(calls)], [7, 8]], lambda out: out)
    work()
    first = work.summary()
    work()
    assert work.summary() is first and first["lines"] == 2 and first["tokens"] == 3
    assert first == fingerprint([[1], [7, 8]]) and first != fingerprint([[2], [7, 8]])
    assert work._first is None and len(calls) == 2


def result(name, seconds, lines=None):
    res = Result(name, [seconds])
    res.summary = fingerprint(lines) if lines is not None else None
    return res


def test_id_remarks_count_differing_lines_against_tokenizers_and_drop_the_crcs():
    results = {TOKKIT: result(TOKKIT, 1.0, [[1], [2], [3]]),
               REFERENCE: result(REFERENCE, 12.0, [[1], [2], [3]]),
               "sentencepiece encode": result("sentencepiece encode", 6.0, [[1], [9], [3]]),
               "tokie encode_batch_flat": result("tokie encode_batch_flat", 0.8, [[1], [2]])}
    remarks = id_remarks(results)
    assert remarks[TOKKIT] == "ids = tokenizers" and remarks[REFERENCE] == "the ids reference"
    assert remarks["sentencepiece encode"] == "ids differ from tokenizers on 1 of 3 lines"
    assert remarks["tokie encode_batch_flat"] == "ids differ from tokenizers on 1 of 3 lines"  # a line missing
    assert all("crc32" not in r.summary for r in results.values()) and results[TOKKIT].summary["tokens"] == 3
    alone = id_remarks({TOKKIT: result(TOKKIT, 1.0, [[1]]), REFERENCE: Result(REFERENCE, note="failed: x")})
    assert alone == {TOKKIT: "ids not checked (tokenizers did not run)"}


def test_targets_are_judged_per_contender_and_summed_up_on_tokkits_row():
    results = {TOKKIT: Result(TOKKIT, [1.0]), REFERENCE: Result(REFERENCE, [12.0]),
               "sentencepiece encode": Result("sentencepiece encode", [4.0]),
               "tokie encode_batch_flat": Result("tokie encode_batch_flat", [0.8])}
    rows = group_rows("hub", "g", results, baseline=TOKKIT, work=2.0, unit="MB/s", target=TARGET,
                      notes={"other": "skipped: other is not installed"})
    mark_targets(rows)
    by = {r["name"]: r for r in rows}
    assert by[REFERENCE]["target_met"] and not by["sentencepiece encode"]["target_met"]
    assert not by["tokie encode_batch_flat"]["target_met"]
    assert "target >= 5.0x: missed" in by["sentencepiece encode"]["note"]
    assert by[TOKKIT]["targets_missed"] == ["sentencepiece", "tokie"]
    assert by[TOKKIT]["speedups"][REFERENCE] == pytest.approx(12.0)
    text = markdown(rows)
    assert f"**g** (target: {TARGET})" in text
    assert "| tokkit encode_batch_flat | 1.000 | 2.00 | 1.00x | missed: sentencepiece, tokie |" in text
    assert "| tokenizers encode_batch | 12.000 | 0.17 | 12.00x | >= 10.0x: met |" in text
    assert "| other | | | | | skipped: other is not installed |" in text


def test_hub_is_a_suite_of_tokkit_bench_with_a_description():
    assert names("hub") == ("hub",) and "hub" not in names("all") and "1 thread" in SUITES["hub"].description


# ------------------------------------------------------------------------------ bad input
def test_corpus_root_takes_one_existing_folder(tmp_path):
    assert corpus_root([str(tmp_path)]) == str(tmp_path)
    with pytest.raises(TokkitError, match="one --corpus"):
        corpus_root([str(tmp_path), str(tmp_path)])
    with pytest.raises(TokkitError, match="shared corpus folder"):
        corpus_root([str(tmp_path / "nope")])


@pytest.mark.parametrize("corpus", [["nope"], ["a", "b"]])
def test_cli_refuses_a_bad_hub_corpus_in_one_line(corpus, tmp_path, capsys):
    pytest.importorskip("psutil")
    args = [x for c in corpus for x in ("--corpus", str(tmp_path / c))]
    assert run_cli(["bench", "--suite", "hub", "-q", *args, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tokkit: error:") and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------ built files, end to end
@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Tiny XLM-R-style and Llama-2-style files (2,000 pieces, 0.3 MB of the training text)."""
    work = tmp_path_factory.mktemp("hub")
    said = []
    files = build_files(str(SHARED), str(work), vocab_size=2000, train_mb=0.3, log=said.append)
    return work, files, said


@needs_corpus
@needs_builders
@pytest.mark.corpus
def test_built_files_hold_the_model_and_a_file_tokenizers_encodes_as_sentencepiece(built):
    from tokenizers import Tokenizer

    work, files, said = built
    assert len(said) == 2 and all("training" in s for s in said)
    for kind, folder in files.items():
        assert sorted(p.name for p in (work / folder_name(kind, 2000, 0.3)).iterdir()) == \
            sorted([MODEL_NAMES[kind], "tokenizer.json"])
        tok = Tokenizer.from_file(f"{folder}/tokenizer.json")
        ids = tok.encode("Hello world, this is a test.", add_special_tokens=False).ids
        assert ids and all(i > 3 for i in ids)  # real pieces, neither specials nor <unk>
    spec = json.loads(open(f"{files['xlmr']}/tokenizer.json", encoding="utf-8").read())
    assert spec["model"]["type"] == "Unigram" and spec["normalizer"]["normalizers"][0]["type"] == "Precompiled"
    assert [t["content"] for t in spec["added_tokens"][:4]] == ["<s>", "<pad>", "</s>", "<unk>"]
    assert vocab_size_of(files["xlmr"]) == 2002  # 4 specials before piece 3 onwards, <mask> after
    spec = json.loads(open(f"{files['llama']}/tokenizer.json", encoding="utf-8").read())
    assert spec["model"]["type"] == "BPE" and spec["model"]["byte_fallback"] and spec["model"]["merges"]
    assert spec["pre_tokenizer"]["type"] == "Metaspace"
    again = []
    assert build_files(str(SHARED), str(work), vocab_size=2000, train_mb=0.3, log=again.append) == files
    assert again == []  # built once, then reused


@needs_corpus
@needs_builders
@pytest.mark.corpus
@pytest.mark.parametrize("damage", ["no merges", "no pieces"])
def test_check_file_refuses_a_conversion_that_disagrees_with_sentencepiece(built, damage, tmp_path):
    _, files, _ = built
    folder = tmp_path / "llama"
    shutil.copytree(files["llama"], folder)
    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    spec["model"]["merges"] = []
    if damage == "no pieces":  # what a converter that never read the .model writes
        spec["model"]["vocab"] = {"<unk>": 0, "<s>": 1, "</s>": 2}
    (folder / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    lines = bench_lines(str(SHARED), 20_000)
    with pytest.raises(TokkitError, match="no ids" if damage == "no pieces" else "disagrees with sentencepiece"):
        check_file("llama", str(folder), lines)
    check_file("llama", files["llama"], lines)  # the undamaged file passes


@needs_corpus
@needs_builders
@pytest.mark.corpus
@pytest.mark.slow
def test_suite_runs_every_contender_once_with_ids_checked(built, tmp_path):
    import tokkit

    _, files, _ = built
    wordpiece = tmp_path / "wordpiece"
    tokkit.train(texts=bench_lines(str(SHARED), 200_000), algo="wordpiece", vocab_size=3000).save(str(wordpiece))
    said = []
    rows = run_suite(str(SHARED), str(tmp_path), mb=0.02, repeat=1, warmup=0,
                     files={**files, "wordpiece": str(wordpiece)}, log=said.append)
    groups = {}
    for row in rows:
        groups.setdefault(row["kind"], {})[row["name"]] = row
    assert list(groups) == ["xlmr", "llama", "wordpiece"]
    assert all(next(iter(g)) == TOKKIT and g[TOKKIT]["baseline"] for g in groups.values())
    assert "sentencepiece encode" not in groups["wordpiece"]  # no .model beside a WordPiece file
    for kind, group in groups.items():
        ref = group[REFERENCE]
        assert len(ref["times"]) == 1 and ref["throughput"] > 0 and ref["ids"] == "the ids reference"
        for name, row in group.items():
            if row["times"] and name != REFERENCE:
                assert row["ids"].startswith("ids "), (kind, name, row["ids"])
            elif not row["times"]:
                assert row["note"].startswith("skipped:"), (kind, name, row["note"])
    assert groups["xlmr"]["sentencepiece encode"]["ids"] == "ids = tokenizers"  # after fairseq's offset
    wp = groups["wordpiece"][TOKKIT]
    assert wp["ids"] == "ids = tokenizers" and REFERENCE in wp["speedups"]
    assert groups["wordpiece"][REFERENCE]["target_speedup"] == 10.0 and "target_met" in groups["wordpiece"][REFERENCE]
    assert any("round 1" in s for s in said)
    text = markdown(rows)
    assert text.count("(target: tokkit encode_batch_flat, 1 thread:") == 3 and "ids = tokenizers" in text
