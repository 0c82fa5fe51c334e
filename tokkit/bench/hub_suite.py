"""Encoding Hub-style SentencePiece files: tokkit against tokenizers, sentencepiece and tokie, 1 thread each.

The files are an XLM-R-style Unigram file and a Llama-2-style SentencePiece BPE file with byte
fallback, 16k pieces each, built once by tokkit.bench.hub_files. The text is the non-empty lines
of held-out en/wiki files (096.txt first, then 095.txt...) for half of `mb` and the same
line-aligned fraction of every Tatoeba file for the other half (2.6 MB by default).

Each contender runs in its own worker process (tokkit.bench.harness.measure_tasks): WARMUP untimed
rounds, then `repeat` rounds with the contenders alternating; MB/s = UTF-8 MB of the lines /
median wall time. RAYON_NUM_THREADS=1 holds the Rust contenders to one thread:

- tokkit: `tokkit.load(tokenizer.json).encode_batch_flat(lines, num_threads=1)`;
- tokenizers: `Tokenizer.from_file(tokenizer.json).encode_batch(lines, add_special_tokens=False)`;
- sentencepiece: `SentencePieceProcessor(model_file=...).encode(lines, num_threads=1)` on the .model;
- tokie: `Tokenizer.from_json(tokenizer.json).encode_batch_flat(lines, add_special_tokens=False)`.

Correctness is checked outside the timer, once per contender: after its first run a worker keeps a
CRC-32 of each line's ids (sentencepiece's mapped to the file's numbering), and the suite counts
the lines where a contender's ids differ from tokenizers'.
"""
from __future__ import annotations

import os
import zlib
from pathlib import Path

import numpy as np

import tokkit
from tokkit.bench.contenders import sentencepiece_model, split_installed, tokenizers_file, tokie_file
from tokkit.bench.encode_suite import WARMUP
from tokkit.bench.harness import measure_tasks
from tokkit.bench.hub_files import (KINDS, MODEL_NAMES, TITLES, TRAIN_MB, VOCAB_SIZE, build_files, fraction_lines,
                                    hub_ids, vocab_size_of)
from tokkit.bench.report import group_rows
from tokkit.errors import TokkitError

T = "tokkit.bench.hub_suite:"
DEFAULT_MB = 2.6
DEFAULT_CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"  # a checkout beside ../shared
DEFAULT_WORKDIR = os.path.join("~", ".cache", "tokkit-bench", "hub")
TOKKIT = "tokkit encode_batch_flat"
REFERENCE = "tokenizers encode_batch"
# The plan's speed targets for tokkit on one thread, by contender family.
TARGETS = {"tokenizers": 10.0, "sentencepiece": 5.0, "tokie": 1.0}
TARGET = "tokkit encode_batch_flat, 1 thread: " + ", ".join(f">= {x:.1f}x {name}" for name, x in TARGETS.items())


# ---------------------------------------------------------------------------------------- text
def bench_lines(corpus: str, nbytes: int) -> list[str]:
    """Held-out wiki lines (096.txt down) for half of `nbytes`, then every Tatoeba file's share."""
    wiki = sorted(Path(corpus, "en", "wiki").glob("*.txt"), reverse=True)
    wiki = [str(p) for p in wiki if p.stem.isdigit() and int(p.stem) >= 20]  # 000-019 train the files
    tatoeba = sorted(str(p) for p in Path(corpus, "multilingual", "tatoeba").glob("*"))
    if not wiki or not tatoeba:
        raise TokkitError(f"{corpus}: the hub suite's text needs en/wiki/020-096.txt and multilingual/tatoeba")
    lines, size, half = [], 0, nbytes // 2
    for path in wiki:
        with open(path, "rb") as f:
            data = f.read(half - size)
        full = size + len(data) >= half
        if full:
            data = data[: data.rfind(b"\n") + 1]  # back to the last line end
        lines += [line for line in data.decode("utf-8").split("\n") if line.strip()]
        size += len(data)
        if full:
            break
    return lines + fraction_lines(tatoeba, nbytes - size)


def lines_mb(lines: list[str]) -> float:
    return sum(len(line.encode("utf-8")) for line in lines) / 1e6


# ---------------------------------------------------------------------------------------- ids
def split_flat(ids, sizes, n: int) -> list:
    """Per-line id arrays of a flat result: `sizes` holds n+1 boundaries (tokkit) or n lengths (tokie).

    >>> [a.tolist() for a in split_flat([5, 6, 7], [0, 2, 3], 2)], [a.tolist() for a in split_flat([5, 6], [1, 1], 2)]
    ([[5, 6], [7]], [[5], [6]])
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    bounds = sizes if len(sizes) == n + 1 else np.concatenate(([0], np.cumsum(sizes)))
    flat = np.asarray(ids, dtype=np.int64)
    return [flat[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]


def fingerprint(per_line) -> dict:
    """Lines, tokens and a CRC-32 of each line's ids (as int64), to compare contenders cheaply.

    >>> fingerprint([[1, 2], []])["crc32"] == fingerprint([np.array([1, 2]), np.array([], dtype=int)])["crc32"]
    True
    """
    arrays = [np.asarray(ids, dtype=np.int64) for ids in per_line]
    return {"lines": len(arrays), "tokens": int(sum(len(a) for a in arrays)),
            "crc32": [zlib.crc32(a.tobytes()) for a in arrays]}


class Encoding:
    """One contender's timed call; `summary()` fingerprints the ids of its first run, outside the timer.

    Only the first output is kept (until the worker asks for the summary right after that run),
    so later runs do not hold an earlier run's output while they work.
    """

    def __init__(self, call, per_line):
        self._call, self._per_line, self._first, self._summary = call, per_line, None, None

    def __call__(self):
        out = self._call()
        if self._summary is None:
            self._first = out

    def summary(self) -> dict | None:
        if self._summary is None and self._first is not None:
            self._summary, self._first = fingerprint(self._per_line(self._first)), None
        return self._summary


# ---------------------------------------------------------------------------------------- tasks
def tokkit_task(folder: str, corpus: str, nbytes: int):
    """tokkit: encode_batch_flat(lines, num_threads=1) -> (ids, offsets)."""
    tok = tokkit.load(os.path.join(folder, "tokenizer.json"))
    lines = bench_lines(corpus, nbytes)
    return Encoding(lambda: tok.encode_batch_flat(lines, num_threads=1), lambda out: split_flat(*out, len(lines)))


def tokkit_cold_task(folder: str, corpus: str, nbytes: int):
    """tokkit as above with its memos cleared before each run: the first pass over text it has not seen."""
    tok = tokkit.load(os.path.join(folder, "tokenizer.json"))
    lines = bench_lines(corpus, nbytes)

    clear = getattr(tok._encoder, "clear_memos", lambda: None)  # the fast paths keep per-thread tables instead

    def run():
        clear()
        return tok.encode_batch_flat(lines, num_threads=1)
    return Encoding(run, lambda out: split_flat(*out, len(lines)))


def tokenizers_task(folder: str, corpus: str, nbytes: int):
    """tokenizers: encode_batch(lines, add_special_tokens=False); its threads follow RAYON_NUM_THREADS."""
    tok = tokenizers_file(folder)
    lines = bench_lines(corpus, nbytes)
    return Encoding(lambda: tok.encode_batch(lines, add_special_tokens=False), lambda out: [e.ids for e in out])


def sentencepiece_task(folder: str, corpus: str, nbytes: int, kind: str):
    """sentencepiece: encode(lines, num_threads=1) on the .model; ids mapped to the file's for the check."""
    sp = sentencepiece_model(os.path.join(folder, MODEL_NAMES[kind]))
    lines = bench_lines(corpus, nbytes)
    return Encoding(lambda: sp.encode(lines, num_threads=1), lambda out: [hub_ids(kind, ids) for ids in out])


def tokie_task(folder: str, corpus: str, nbytes: int):
    """tokie: Tokenizer.from_json(...).encode_batch_flat(lines, add_special_tokens=False) -> (ids, lengths)."""
    tok = tokie_file(folder)
    lines = bench_lines(corpus, nbytes)
    return Encoding(lambda: tok.encode_batch_flat(lines, add_special_tokens=False),
                    lambda out: split_flat(*out, len(lines)))


# ---------------------------------------------------------------------------------------- suite
def plan(files: dict, corpus: str, nbytes: int) -> list:
    """(group, kind, {contender: (module needed, setup, kwargs)}) per file; sentencepiece only beside a .model."""
    groups = []
    for kind, folder in files.items():
        k = {"folder": folder, "corpus": corpus, "nbytes": nbytes}
        contenders = {TOKKIT: (None, T + "tokkit_task", k),
                      TOKKIT + ", memos cleared each run": (None, T + "tokkit_cold_task", k),
                      REFERENCE: ("tokenizers", T + "tokenizers_task", k)}
        if kind in MODEL_NAMES:
            contenders["sentencepiece encode"] = ("sentencepiece", T + "sentencepiece_task", dict(k, kind=kind))
        contenders["tokie encode_batch_flat"] = ("tokie", T + "tokie_task", k)
        title = TITLES.get(kind, kind)
        groups.append((f"{title} {vocab_size_of(folder):,}: lines, 1 thread", kind, contenders))
    return groups


def id_remarks(results: dict) -> dict:
    """{contender: 'ids = tokenizers' or how many lines differ}; drops the CRCs from the summaries."""
    ref = results.get(REFERENCE)
    ref_crc = (ref.summary or {}).get("crc32") if ref is not None else None
    remarks = {}
    for name, res in results.items():
        crc = (res.summary or {}).pop("crc32", None)
        if name == REFERENCE or not res.times:
            continue
        if ref_crc is None or crc is None:
            remarks[name] = "ids not checked (tokenizers did not run)"
            continue
        differ = sum(a != b for a, b in zip(crc, ref_crc)) + abs(len(crc) - len(ref_crc))
        remarks[name] = "ids = tokenizers" if differ == 0 else f"ids differ from tokenizers on {differ:,} of " \
                                                               f"{len(ref_crc):,} lines"
    if ref is not None and ref.times:
        remarks[REFERENCE] = "the ids reference"
    return remarks


def mark_targets(rows: list[dict], targets: dict = TARGETS) -> None:
    """Each contender row with a target (`targets` by the first word of its name): whether tokkit met it
    (in its note too); tokkit's row: its speed-up over every contender and the targets it missed."""
    base = next((r for r in rows if r.get("baseline")), None)
    speedups, missed = {}, []
    for row in rows:
        goal = targets.get(row["name"].split()[0])
        if goal is None or row.get("baseline"):
            continue
        row["target_speedup"] = goal
        if "speedup" in row:
            row["target_met"] = row["speedup"] >= goal
            speedups[row["name"]] = row["speedup"]
            missed += [] if row["target_met"] else [row["name"].split()[0]]
            said = f"tokkit {row['speedup']:.2f}x, target >= {goal:.1f}x: {'met' if row['target_met'] else 'missed'}"
            row["note"] = "; ".join(x for x in (row.get("note", ""), said) if x)
    if base is not None and speedups:
        base.update(speedups=speedups, targets_missed=missed)


def run_suite(corpus: str, workdir: str, *, mb: float = DEFAULT_MB, repeat: int = 5, warmup: int = WARMUP,
              train_mb: float | None = TRAIN_MB, vocab_size: int = VOCAB_SIZE, files: dict | None = None,
              only: set | None = None, log=print) -> list[dict]:
    """Build the files (kept in workdir) unless `files` ({kind: folder}) are given, then measure each one."""
    kinds = tuple(k for k in KINDS if not only or k in only)
    files = files or build_files(corpus, workdir, kinds=kinds, vocab_size=vocab_size, train_mb=train_mb,
                                 log=log)
    nbytes = int(mb * 1e6)
    work = lines_mb(bench_lines(corpus, nbytes))
    env = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1")
    rows = []
    for group, kind, contenders in plan(files, corpus, nbytes):
        if not only or kind in only:
            log(f"{group} ({work:.2f} MB)")
            rows += measure_group(group, kind, contenders, work=work, repeat=repeat, warmup=warmup, env=env, log=log)
    return rows


def measure_group(group: str, kind: str, contenders: dict, *, work: float, repeat: int, warmup: int, env: dict,
                  log) -> list[dict]:
    """Time the installed contenders of one file side by side; rows with ids remarks and targets."""
    tasks, notes = split_installed(contenders)
    results = measure_tasks(tasks, repeat=repeat, warmup=warmup, env=env, log=log)
    for res in results.values():
        if res.setup_s is None and res.note.startswith("failed: "):  # tokie, say, refusing a component
            res.note = f"skipped: cannot load the file ({res.note[len('failed: '):]})"
    remarks = id_remarks(results)
    rows = group_rows("hub", group, results, baseline=TOKKIT, work=work, unit="MB/s", notes=notes, target=TARGET,
                      remarks=remarks, extra={"kind": kind})
    for row in rows:
        row["ids"] = remarks.get(row["name"], "")
    mark_targets(rows)
    return rows


def markdown(rows: list[dict]) -> str:
    """One markdown table per file: median, MB/s, tokkit's speed-up over each contender against its
    target, and whether the ids equal tokenizers'."""
    out, group = [], None
    for row in rows:
        if row["group"] != group:
            group = row["group"]
            out += ["", f"**{group}** (target: {TARGET})", "",
                    "| contender | median s | MB/s | tokkit speed-up | target | ids |", "|---|---:|---:|---:|---|---|"]
        out.append(_markdown_row(row))
    return "\n".join(out).strip() + "\n"


def _markdown_row(row: dict) -> str:
    name, ids = row["name"], row.get("ids", "")
    if not row.get("times"):
        return f"| {name} | | | | | {row.get('note', '')} |"
    speed, met = (f"{row['speedup']:.2f}x" if "speedup" in row else ""), ""
    if row.get("baseline") and "speedups" in row:
        speed, missed = "1.00x", row["targets_missed"]
        met = f"missed: {', '.join(missed)}" if missed else f"all {len(row['speedups'])} met"
    elif "target_met" in row:
        met = f">= {row['target_speedup']:.1f}x: {'met' if row['target_met'] else 'missed'}"
    return f"| {name} | {row['median']:.3f} | {row['throughput']:.2f} | {speed} | {met} | {ids} |"


def input_note(corpus: str, mb: float, train_mb: float | None) -> str:
    """How the text and the files were made, for results.md."""
    lines = bench_lines(corpus, int(mb * 1e6))
    trained = "the whole training text (~30 MB)" if train_mb is None else f"{train_mb:g} MB of the training text"
    return (f"hub: {lines_mb(lines):.2f} MB in {len(lines):,} lines (held-out en/wiki from 096.txt down + Tatoeba "
            f"of {corpus}); files trained by sentencepiece on {trained} (en/wiki 000-019, Tatoeba, Korean Wikipedia)")


def corpus_root(paths: list[str] | None) -> str:
    """The shared corpus folder: the one --corpus given, or ../shared/corpus beside the checkout."""
    if paths and len(paths) > 1:
        raise TokkitError("--suite hub takes one --corpus: the shared corpus folder (en/wiki, multilingual)")
    root = paths[0] if paths else str(DEFAULT_CORPUS)
    if not os.path.isdir(root):
        raise TokkitError(f"{root}: --suite hub needs the shared corpus folder (en/wiki, multilingual); "
                          f"pass --corpus DIR")
    return root


def run_hub_suite(*, corpus: list[str] | None, size: int | None, repeat: int, log) -> tuple[list[dict], list[str]]:
    """`tokkit bench --suite hub`: rows and notes, the files cached in ~/.cache/tokkit-bench/hub."""
    root = corpus_root(corpus)
    mb = size / 1e6 if size else DEFAULT_MB
    rows = run_suite(root, os.path.expanduser(DEFAULT_WORKDIR), mb=mb, repeat=repeat, log=log)
    return rows, [input_note(root, mb, TRAIN_MB)]
