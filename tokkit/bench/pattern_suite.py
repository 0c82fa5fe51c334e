"""Today's byte-level files (GPT-2, ModernBERT, Llama 3, Qwen2, o200k), whole text, 1 thread: tokkit
against gigatoken, fastokens, tokenizers and tiktoken.

The files are 32k BPEs trained by `tokenizers` on en/wiki 000-019 (tokkit.bench.pattern_files). The
text is one string: held-out en/wiki from 080.txt on for 80% of `mb`, then 20% of multilingual text,
a quarter each from Tatoeba, Korean Wikipedia, Japanese Aozora and Chinese Gutenberg (the same
line-aligned share of every file of each). Contenders, each on the whole string:

- tokkit: `tokkit.load(folder).encode_to_numpy(text)`;
- gigatoken: `gigatoken.Tokenizer(tokenizer.json).encode(text)`;
- fastokens: `Tokenizer.from_file(tokenizer.json).encode_batch_flat([text])`, its ids as one buffer
  (its `encode` builds an Encoding; the flat call is its fastest way to an array of ids);
- tokenizers: `Tokenizer.from_file(tokenizer.json).encode(text, add_special_tokens=False)` (one string
  runs on one thread; a 10 MB string costs it no more per MB than its lines do);
- tiktoken, for the o200k and Llama 3 (cl100k) files only: `Encoding(pat_str=<the file's pattern>,
  mergeable_ranks=<each token's bytes: its id>).encode_ordinary(text)`. tiktoken has no normalizer,
  so NFC files are left out; it looks a whole piece up before merging, as ignore_merges does, and
  merges by the rank of the merged bytes rather than by merge rules: the ids check says whether
  that gives the file's ids.

Correctness comes first: before timing a file, the suite encodes the whole text once with every
contender and compares the ids with tokkit's; where they differ it encodes line by line and counts
the lines that differ. Then each contender runs in its own worker process
(tokkit.bench.harness.measure_tasks): WARMUP untimed rounds, `repeat` rounds alternating; MB/s =
UTF-8 MB of the text / median wall time. Every contender encodes the same str object each round,
so Python's cached UTF-8 of it serves them all alike.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

import tokkit
from tokkit.bench.contenders import (fastokens_file, gigatoken_file, missing, split_installed, tiktoken_from_bytelevel,
                                     tokenizers_file)
from tokkit.bench.encode_suite import WARMUP
from tokkit.bench.harness import measure_tasks
from tokkit.bench.hub_files import fraction_lines
from tokkit.bench.hub_suite import mark_targets
from tokkit.bench.pattern_files import KINDS, SPLIT_PATTERNS, TITLES, VOCAB_SIZE, build_files, text_prefix
from tokkit.bench.report import group_rows
from tokkit.errors import TokkitError

T = "tokkit.bench.pattern_suite:"
DEFAULT_MB = 10.0
WIKI_SHARE = 0.8
WIKI_FIRST = 80  # en/wiki 080.txt on; 000-019 train the files
MULTILINGUAL = ("tatoeba", "ko_wikipedia", "ja_aozora", "zh_gutenberg")
DEFAULT_CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"  # a checkout beside ../shared
DEFAULT_WORKDIR = os.path.join("~", ".cache", "tokkit-bench", "patterns")
TIKTOKEN_KINDS = ("llama3", "o200k")  # no normalizer; a pattern tiktoken's regex engine takes
TOKKIT, GIGATOKEN, FASTOKENS, TOKENIZERS, TIKTOKEN = ("tokkit encode_to_numpy", "gigatoken encode",
                                                      "fastokens encode_batch_flat", "tokenizers encode",
                                                      "tiktoken encode_ordinary")
MODULES = {TOKKIT: None, GIGATOKEN: "gigatoken", FASTOKENS: "fastokens", TOKENIZERS: "tokenizers",
           TIKTOKEN: "tiktoken"}
# tokenizers: 1.0's release candidates encode byte-level BPE some 50x faster than 0.23 did, against
# which the bar was 20x; against 1.0 it is to stay ahead.
TARGETS = {"gigatoken": 1.0, "fastokens": 1.0, "tokenizers": 1.0, "tiktoken": 5.0}
TARGET = "tokkit encode_to_numpy, 1 thread: " + ", ".join(f">= {x:.1f}x {name}" for name, x in TARGETS.items())


# ---------------------------------------------------------------------------------------- text
def wiki_text(corpus: str, nbytes: int) -> str:
    """The first `nbytes` of en/wiki 080.txt on (in order), cut back to a line end."""
    paths = sorted(p for p in Path(corpus, "en", "wiki").glob("*.txt") if p.stem.isdigit()
                   and int(p.stem) >= WIKI_FIRST)
    if not paths:
        raise TokkitError(f"{corpus}: the patterns suite's text needs en/wiki/{WIKI_FIRST:03d}.txt and on")
    return text_prefix(paths, nbytes)


def multilingual_text(corpus: str, nbytes: int) -> str:
    """A quarter of `nbytes` from each MULTILINGUAL folder: the same line-aligned share of its files."""
    lines = []
    for name in MULTILINGUAL:
        paths = sorted(str(p) for p in Path(corpus, "multilingual", name).glob("*") if p.is_file())
        if not paths:
            raise TokkitError(f"{corpus}: the patterns suite's text needs multilingual/{name}")
        lines += fraction_lines(paths, nbytes // len(MULTILINGUAL))
    return "".join(line + "\n" for line in lines)


def bench_text(corpus: str, nbytes: int) -> str:
    """The benchmark's one string: held-out wiki for WIKI_SHARE of `nbytes`, then the multilingual mix."""
    wiki = int(nbytes * WIKI_SHARE)
    return wiki_text(corpus, wiki) + multilingual_text(corpus, nbytes - wiki)


def text_mb(text: str) -> float:
    return len(text.encode("utf-8")) / 1e6


# ---------------------------------------------------------------------------------------- contenders
def tiktoken_encoding(folder: str, kind: str):
    """A tiktoken Encoding of the file with its Split pattern (the harness's one tiktoken builder)."""
    return tiktoken_from_bytelevel(folder, SPLIT_PATTERNS[kind])


def encoder(name: str, folder: str, kind: str):
    """The contender's call on one string (the call that is timed)."""
    if name == TOKKIT:
        return tokkit.load(folder).encode_to_numpy
    if name == GIGATOKEN:
        return gigatoken_file(folder).encode
    if name == FASTOKENS:
        flat = fastokens_file(folder).encode_batch_flat
        return lambda text: flat([text])
    if name == TOKENIZERS:
        tok = tokenizers_file(folder)
        return lambda text: tok.encode(text, add_special_tokens=False)
    return tiktoken_encoding(folder, kind).encode_ordinary


def as_ids(name: str, out) -> np.ndarray:
    """A contender's output as an int64 array of ids."""
    if name == FASTOKENS:
        return np.frombuffer(out[0], dtype=np.uint32).astype(np.int64)
    return np.asarray(out.ids if name == TOKENIZERS else out, dtype=np.int64)


def contenders(kind: str) -> list[str]:
    return [TOKKIT, GIGATOKEN, FASTOKENS, TOKENIZERS] + ([TIKTOKEN] if kind in TIKTOKEN_KINDS else [])


def encode_task(name: str, folder: str, kind: str, corpus: str, nbytes: int):
    """Worker setup: load the file and the text; the work is one whole-text encode."""
    encode = encoder(name, folder, kind)
    text = bench_text(corpus, nbytes)
    return lambda: encode(text)


# ---------------------------------------------------------------------------------------- ids check
def check_ids(kind: str, folder: str, text: str, names: list[str] | None = None) -> dict:
    """{contender: {"identical": True/False/None, ...}}: its ids on the whole text against tokkit's.

    On a difference, `differing_lines` of `lines` (non-empty lines, each encoded alone) and the first
    such line's number; None with a `note` when the contender is not installed or cannot load the file.
    """
    mine = encoder(TOKKIT, folder, kind)
    ours = as_ids(TOKKIT, mine(text))
    out = {}
    for name in (names or contenders(kind))[1:]:
        why = missing(MODULES[name])
        if why:
            out[name] = {"identical": None, "note": why}
            continue
        try:
            encode = encoder(name, folder, kind)
        except Exception as exc:  # noqa: BLE001 - a contender refusing the file is a finding, not a crash
            out[name] = {"identical": None, "note": f"cannot load the file: {str(exc).splitlines()[0][:160]}"}
            continue
        theirs = as_ids(name, encode(text))
        out[name] = {"identical": bool(np.array_equal(ours, theirs)), "tokens": len(theirs)}
        if not out[name]["identical"]:
            out[name].update(differing_lines(mine, encode, name, text))
    return out


def differing_lines(ours, theirs, name: str, text: str) -> dict:
    """How many non-empty lines of `text` the two encoders give different ids, and the first one."""
    lines = [line for line in text.split("\n") if line]
    bad = [k for k, line in enumerate(lines) if not np.array_equal(as_ids(TOKKIT, ours(line)),
                                                                     as_ids(name, theirs(line)))]
    return {"differing_lines": len(bad), "lines": len(lines), "first_line": bad[0] if bad else None,
            "first_text": lines[bad[0]][:80] if bad else ""}


def ids_words(check: dict) -> str:
    """One contender's check in words: 'yes', 'NO (3 of 40 lines differ, first 7)', or why not checked.

    >>> ids_words({"identical": True}), ids_words({"identical": None, "note": "x is not installed"})
    ('yes', 'not checked: x is not installed')
    >>> ids_words({"identical": False, "differing_lines": 3, "lines": 40, "first_line": 7})
    'NO (3 of 40 lines differ, first: line 7)'
    """
    if check["identical"] is None:
        return f"not checked: {check['note']}"
    if check["identical"]:
        return "yes"
    if not check.get("differing_lines"):
        return f"NO (whole text differs; every one of {check.get('lines', 0):,} lines alone agrees)"
    return f"NO ({check['differing_lines']:,} of {check['lines']:,} lines differ, first: line {check['first_line']})"


def ids_line(kind: str, checks: dict) -> str:
    """'<kind>: ids identical: tokenizers yes, gigatoken yes, ...' (tokkit against each)."""
    said = ", ".join(f"{name.split()[0]} {ids_words(c)}" for name, c in checks.items())
    loud = "  <-- MISMATCH" if any(c["identical"] is False for c in checks.values()) else ""
    return f"{kind}: ids identical to tokkit's: {said}{loud}"


# ---------------------------------------------------------------------------------------- suite
def plan(files: dict, corpus: str, nbytes: int) -> list:
    """(group, kind, {contender: (module needed, setup, kwargs)}) per file."""
    groups = []
    for kind, folder in files.items():
        k = {"folder": folder, "kind": kind, "corpus": corpus, "nbytes": nbytes}
        tasks = {name: (MODULES[name], T + "encode_task", dict(k, name=name)) for name in contenders(kind)}
        groups.append((f"{TITLES[kind]}: whole text, 1 thread", kind, tasks))
    return groups


def check_files(files: dict, text: str, log=print) -> dict:
    """{kind: check_ids(...)} for every file, each said in one line."""
    checks = {}
    for kind, folder in files.items():
        checks[kind] = check_ids(kind, folder, text)
        log(ids_line(kind, checks[kind]))
    return checks


def run_suite(corpus: str, workdir: str, *, mb: float = DEFAULT_MB, repeat: int = 3, warmup: int = WARMUP,
              vocab_size: int = VOCAB_SIZE, train_mb: float | None = None, only: set | None = None,
              log=print) -> tuple[list[dict], dict]:
    """Build the files (kept in workdir), check every contender's ids, then time them; (rows, checks)."""
    kinds = tuple(k for k in KINDS if not only or k in only)
    files = build_files(corpus, workdir, kinds=kinds, vocab_size=vocab_size, train_mb=train_mb, log=log)
    nbytes = int(mb * 1e6)
    text = bench_text(corpus, nbytes)
    work = text_mb(text)
    checks = check_files(files, text, log=log)
    del text
    env = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1")
    rows = []
    for group, kind, tasks in plan(files, corpus, nbytes):
        log(f"{group} ({work:.2f} MB)")
        rows += measure_group(group, kind, tasks, checks[kind], work=work, repeat=repeat, warmup=warmup, env=env,
                              log=log)
    return rows, checks


def measure_group(group: str, kind: str, tasks: dict, checks: dict, *, work: float, repeat: int, warmup: int,
                  env: dict, log) -> list[dict]:
    """Time the installed contenders of one file side by side; rows with the ids check and targets."""
    runnable, notes = split_installed(tasks)
    results = measure_tasks(runnable, repeat=repeat, warmup=warmup, env=env, log=log)
    remarks = {name: f"ids identical: {ids_words(c)}" for name, c in checks.items()}
    rows = group_rows("patterns", group, results, baseline=TOKKIT, work=work, unit="MB/s", notes=notes,
                      target=TARGET, remarks=remarks, extra={"kind": kind})
    for row in rows:
        if row["name"] in checks:
            row["ids_check"] = checks[row["name"]]
    mark_targets(rows, TARGETS)
    return rows


# ---------------------------------------------------------------------------------------- table
def table(rows: list[dict]) -> str:
    """One markdown row per file: tokkit's MB/s, then each contender's MB/s and tokkit's speed-up over it
    against its target (met / MISSED); blank where a contender has no row.

    >>> rows = [{"kind": "o200k", "name": TOKKIT, "baseline": True, "times": [1.0], "throughput": 50.0},
    ...         {"kind": "o200k", "name": TIKTOKEN, "times": [2.0], "throughput": 5.0, "speedup": 10.0}]
    >>> table(rows).splitlines()[-1]
    '| o200k | 50.0 |  |  |  | 5.0 (tokkit 10.00x, >= 5x met) |'
    """
    others = [GIGATOKEN, FASTOKENS, TOKENIZERS, TIKTOKEN]
    out = ["| file | tokkit MB/s | " + " | ".join(f"{n.split()[0]} MB/s (tokkit speed-up)" for n in others) + " |",
           "|---|---:|" + "---:|" * len(others)]
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    for kind in kinds:
        mine = {r["name"]: r for r in rows if r["kind"] == kind}
        base = mine.get(TOKKIT, {})
        cells = [kind, f"{base['throughput']:.1f}" if base.get("times") else base.get("note", "")]
        cells += [_cell(mine.get(name)) for name in others]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def _cell(row: dict | None) -> str:
    if row is None:
        return ""
    if not row.get("times"):
        return row.get("note", "").split(";")[0]
    if "speedup" not in row:
        return f"{row['throughput']:.1f}"
    goal = TARGETS[row["name"].split()[0]]
    met = "met" if row["speedup"] >= goal else "MISSED"
    return f"{row['throughput']:.1f} (tokkit {row['speedup']:.2f}x, >= {goal:g}x {met})"


def input_note(corpus: str, mb: float, vocab_size: int = VOCAB_SIZE) -> str:
    """How the text and the files were made, for results.md."""
    text = bench_text(corpus, int(mb * 1e6))
    return (f"patterns: one string of {text_mb(text):.2f} MB ({WIKI_SHARE:.0%} held-out en/wiki from "
            f"{WIKI_FIRST:03d}.txt, then Tatoeba, Korean Wikipedia, Japanese Aozora and Chinese Gutenberg "
            f"in equal shares) of {corpus}; {vocab_size:,}-token files trained by tokenizers on en/wiki 000-019")


def run_patterns_suite(*, corpus: list[str] | None, size: int | None, vocab_size: int, repeat: int,
                       log) -> tuple[list[dict], list[str]]:
    """`tokkit bench --suite patterns`: rows and notes (the ids lines among them), files cached in
    ~/.cache/tokkit-bench/patterns."""
    if corpus and len(corpus) > 1:
        raise TokkitError("--suite patterns takes one --corpus: the shared corpus folder (en/wiki, multilingual)")
    root = corpus[0] if corpus else str(DEFAULT_CORPUS)
    if not os.path.isdir(root):
        raise TokkitError(f"{root}: --suite patterns needs the shared corpus folder (en/wiki, multilingual); "
                          f"pass --corpus DIR")
    mb = size / 1e6 if size else DEFAULT_MB
    rows, checks = run_suite(root, os.path.expanduser(DEFAULT_WORKDIR), mb=mb, repeat=repeat,
                             vocab_size=vocab_size, log=log)
    return rows, [input_note(root, mb, vocab_size)] + [ids_line(kind, c) for kind, c in checks.items()]
