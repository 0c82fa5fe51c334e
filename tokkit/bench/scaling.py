"""How cost grows: train time against corpus size and vocab size, encode time against input length.

- train vs corpus size: line-aligned prefixes of the corpus (10, 25, 50, 100, 200 MB by default,
  capped at what the corpus holds), fixed vocab, tokkit and tokenizers alternating;
- train vs vocab size: 8k, 32k, 64k at one corpus size (25 MB by default);
- encode vs input length: one string of 10 kB to 10 MB, for ordinary corpus text and for
  pathological inputs ("a" * n, "^" * n, corpus text with its whitespace removed), byte-level
  (tokkit, tiktoken, tokenizers) and WordPiece (tokkit, tokenizers). A contender that takes longer
  than the timeout is stopped and dropped from the longer inputs. Inputs under 1 MB get a warm-up
  run first; from 1 MB on, caches start cold for everyone.

Each series is summarised as seconds per MB at its smallest and largest point: a flat figure
means linear cost. One PNG line chart per experiment.
"""
from __future__ import annotations

import os
import shutil
import tempfile

import tokkit
from tokkit.bench.charts import line_chart
from tokkit.bench.corpus_slice import slice_file
from tokkit.bench.contenders import installed, tiktoken_from_bytelevel, tokenizers_file
from tokkit.bench.encode_suite import train_vocab
from tokkit.bench.harness import measure_alternating, measure_tasks, python_cmd
from tokkit.bench.report import group_rows
from tokkit.bench.train_suite import TOKKIT, contenders

SIZES_MB = (10, 25, 50, 100, 200)
VOCABS = (8000, 32000, 64000)
# tokkit's WordPiece scales with PMI scoring, as the published figures were measured (the trainer's
# default is frequency).
TOKKIT_OPTIONS = {"wordpiece": ["--scoring", "pmi"]}
LENGTHS = (10_000, 100_000, 1_000_000, 10_000_000)
KINDS = ("corpus text", "'a' * n", "'^' * n", "text without whitespace")


def make_input(kind: str, nbytes: int, text_path: str) -> str:
    """An input string of about `nbytes` UTF-8 bytes (the corpus is repeated when it is shorter).

    >>> make_input("'a' * n", 5, ""), make_input("'^' * n", 3, "")
    ('aaaaa', '^^^')
    """
    if kind == "'a' * n":
        return "a" * nbytes
    if kind == "'^' * n":
        return "^" * nbytes
    with open(text_path, encoding="utf-8") as f:
        text = f.read(nbytes * 2)
    if kind == "text without whitespace":
        text = "".join(text.split())
    while len(text.encode("utf-8")) < nbytes:
        text += text
    data = text.encode("utf-8")[:nbytes]
    return data.decode("utf-8", errors="ignore")


def encode_task(impl: str, vocab_dir: str, kind: str, nbytes: int, text_path: str):
    """One whole-string encode of a `make_input` string by `impl` (tokkit / tiktoken / tokenizers)."""
    text = make_input(kind, nbytes, text_path)
    if impl == "tokkit":
        tok = tokkit.load(vocab_dir)
        return lambda: tok.encode(text)
    if impl == "tiktoken":
        enc = tiktoken_from_bytelevel(vocab_dir)
        return lambda: enc.encode_ordinary(text)
    tok = tokenizers_file(vocab_dir)
    return lambda: tok.encode(text, add_special_tokens=False)


def _per_mb(rows: list[dict], key: str) -> list[str]:
    """'experiment: name: a s/MB at x -> b s/MB at y' for each series (rows carry `key` and mb)."""
    series: dict[tuple, list[dict]] = {}
    for r in rows:
        if r.get("times") and r.get(key) is not None:
            series.setdefault((r.get("experiment", ""), r["name"]), []).append(r)
    out = []
    for (exp, name), rs in series.items():
        rs.sort(key=lambda r: r[key])
        lo, hi = rs[0], rs[-1]
        if len(rs) > 1:
            out.append(f"{exp}: {name}: {lo['median'] / lo['mb']:.3g} s/MB at {lo[key]:,} -> "
                       f"{hi['median'] / hi['mb']:.3g} s/MB at {hi[key]:,}")
    return out


def train_scaling(full, workdir: str, *, algos, sizes_mb, vocab_size: int, vocab_sizes, vocab_at_mb: float,
                  workers: int, repeat: int, log) -> tuple[list[dict], list[str]]:
    """Train time against corpus size, then against vocab size; tokkit and tokenizers for each of `algos`."""
    rows, notes = [], []
    env = dict(os.environ, RAYON_NUM_THREADS=str(workers), OMP_NUM_THREADS=str(workers))
    have_tokenizers = installed("tokenizers")
    if not have_tokenizers:
        notes.append("tokenizers is not installed: the train scaling shows tokkit alone")
    if "wordpiece" in algos:
        notes.append("tokkit wordpiece trains with " + " ".join(TOKKIT_OPTIONS["wordpiece"]))
    slices, seen = {}, set()
    for mb in sizes_mb:
        s = full if mb * 1e6 >= full.nbytes else slice_file(full, int(mb * 1e6), workdir, f"scale-{mb}")
        if s.nbytes in seen:
            continue
        seen.add(s.nbytes)
        if s is full and mb * 1e6 > full.nbytes * 1.001:
            notes.append(f"the corpus holds {full.mb:.1f} MB: the {mb} MB point uses all of it")
        slices[mb] = s

    def run(s, vocab, experiment, x, key):
        with _tmpdir(workdir) as tmp:
            cmds = {}
            for algo in algos:
                cmds[f"tokkit {algo}"] = python_cmd(TOKKIT) + [tmp, str(vocab), algo, str(workers),
                                                              *TOKKIT_OPTIONS.get(algo, []), s.path]
                if have_tokenizers:
                    cmds[f"tokenizers {algo}"] = python_cmd(contenders(algo)["tokenizers"][0]) + [tmp, str(vocab),
                                                                                                 s.path]
            log(f"scaling: train {', '.join(algos)}, {s.mb:.1f} MB, vocab {vocab}")
            # No warm-up round here: at 100-200 MB it would double the suite's time; the input file
            # was just written, so it is in the page cache for every contender alike.
            res = measure_alternating(cmds, repeat=repeat, env=env, log=log, warmup=False)
        out = []
        for algo in algos:
            group = {k: v for k, v in res.items() if k.endswith(" " + algo)}
            label = f"{x:,} MB" if key == "size_mb" else f"vocab {x:,}"
            out += group_rows("scaling", f"train {algo}, {label}", group, baseline=f"tokkit {algo}",
                              work=s.mb, unit="MB/s", extra={"experiment": experiment, key: x, "mb": s.mb})
        return out

    exp = f"train time vs corpus size (MB), vocab {vocab_size}"
    size_rows = []
    for mb, s in slices.items():
        size_rows += run(s, vocab_size, exp, round(s.mb, 2), "size_mb")
    notes += _per_mb(size_rows, "size_mb")
    v_slice = full if vocab_at_mb * 1e6 >= full.nbytes else slice_file(full, int(vocab_at_mb * 1e6), workdir, "vocab")
    exp_v = f"train time vs vocab size, {v_slice.mb:.1f} MB"
    vocab_rows = []
    for v in vocab_sizes:
        vocab_rows += run(v_slice, v, exp_v, v, "vocab")
    return size_rows + vocab_rows, notes


def encode_scaling(text_path: str, workdir: str, *, vocab_size: int, lengths, threads: int, repeat: int,
                   timeout: float, log) -> tuple[list[dict], list[str]]:
    """Whole-string encode time against input length, ordinary and pathological inputs."""
    notes, rows = [], []
    vocab = {}
    for algo in ("bytelevel", "wordpiece"):
        vocab[algo] = os.path.join(workdir, f"scaling-vocab-{algo}")
        note = train_vocab(text_path, algo, vocab_size, vocab[algo], workers=threads)
        if note:
            notes.append(note)
    impls = [("bytelevel", "tokkit"), ("bytelevel", "tiktoken"), ("bytelevel", "tokenizers"),
             ("wordpiece", "tokkit"), ("wordpiece", "tokenizers")]
    impls = [(a, i) for a, i in impls if i == "tokkit" or installed(i)]
    env = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1")
    for kind in KINDS:
        dropped: set[str] = set()
        for n in lengths:
            tasks = {f"{impl} {algo}": ("tokkit.bench.scaling:encode_task",
                                        {"impl": impl, "vocab_dir": vocab[algo], "kind": kind, "nbytes": n,
                                         "text_path": text_path})
                     for algo, impl in impls if f"{impl} {algo}" not in dropped}
            log(f"scaling: encode {kind}, {n:,} bytes")
            # Inputs of 1 MB and more run without a warm-up round (caches start cold for every
            # contender alike): the slowest contenders take tens of seconds there.
            res = measure_tasks(tasks, repeat=repeat, warmup=0 if n >= 1_000_000 else 1, env=env,
                                timeout=timeout, log=log)
            for name, r in res.items():
                if r.note:
                    dropped.add(name)
                    notes.append(f"encode {kind}: {name} at {n:,} bytes: {r.note}; longer inputs skipped")
            for algo in ("bytelevel", "wordpiece"):
                group = {k: v for k, v in res.items() if k.endswith(" " + algo)}
                if group:
                    rows += group_rows("scaling", f"encode {algo}, {kind}, {n:,} bytes, 1 thread", group,
                                       baseline=f"tokkit {algo}", work=n / 1e6, unit="MB/s",
                                       extra={"experiment": f"encode time vs input length: {kind}", "length": n,
                                              "mb": n / 1e6})
    notes += _per_mb(rows, "length")
    return rows, notes


class _tmpdir:
    def __init__(self, parent):
        self.path = tempfile.mkdtemp(prefix="train-", dir=parent)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


def scaling_charts(rows: list[dict], outdir: str) -> list[str]:
    """Three PNG line charts: train vs size, train vs vocab, encode vs length (one panel per input)."""

    def series(rs, key):
        out: dict[str, list] = {}
        for r in rs:
            if r.get("times"):
                out.setdefault(r["name"], []).append((r[key], r["median"]))
        return out

    paths = []
    by_exp: dict[str, list[dict]] = {}
    for r in rows:
        by_exp.setdefault(r["experiment"], []).append(r)
    for exp, rs in by_exp.items():
        if "corpus size" in exp:
            p = line_chart(series(rs, "size_mb"), os.path.join(outdir, "scaling-train-size.png"), title=exp,
                           xlabel="corpus MB")
        elif "vocab size" in exp:
            p = line_chart(series(rs, "vocab"), os.path.join(outdir, "scaling-train-vocab.png"), title=exp,
                           xlabel="vocab size")
        else:
            continue
        paths.append(p)
    enc = {e.split(": ", 1)[1]: series(rs, "length") for e, rs in by_exp.items() if e.startswith("encode")}
    if enc:
        paths.append(line_chart({}, os.path.join(outdir, "scaling-encode-length.png"), panels=enc, log=True,
                                title="encode time vs input length (one string, 1 thread; log-log)",
                                xlabel="input bytes"))
    return [p for p in paths if p]
