"""Numpy-first encoding: tokkit's flat outputs against its list APIs, an older tokkit, gigatoken and tokie.

Every contender runs in its own worker process (tokkit.bench.harness.measure_tasks): WARMUP
untimed rounds, then `repeat` rounds with the contenders alternating; MB/s = UTF-8 MB of input / median wall
time. The input is the first `mb` MB of the corpus folder's *.txt files (sorted, cut at a line end),
read in place by each worker. Vocabularies are trained by tokkit on the whole corpus folder:
byte-level 50,257 (GPT-2's size), WordPiece 30,000 and char BPE 32,000.

A "before" contender runs the list APIs of another tokkit tree (`--before DIR`, a built checkout of
an earlier commit, put first on the worker's PYTHONPATH) through that tree's own encode_tasks, which
read the slice from a file: the only copy of the text this suite writes, into `workdir`.
"""
from __future__ import annotations

import glob
import os

import tokkit
from tokkit.bench.contenders import gigatoken_file, skip_note, tokie_file
from tokkit.bench.encode_suite import WARMUP, train_vocab
from tokkit.bench.encode_tasks import lines_of, pairs_of
from tokkit.bench.harness import measure_tasks
from tokkit.bench.report import group_rows

T = "tokkit.bench.encode_numpy:"
OLD = "tokkit.bench.encode_tasks:"  # task names an older tokkit tree also has

# Which tokenizer kinds each contender can load (seen on this suite's vocabularies).
KINDS = {
    "tokkit": "bytelevel, wordpiece, char bpe",
    "gigatoken": "bytelevel only",
    "tokie": "bytelevel, wordpiece (its char BPE output differs: it drops the text)",
}
VOCABS = {"bytelevel": 50257, "wordpiece": 30000, "bpe": 32000}


def read_corpus(corpus: str, nbytes: int) -> str:
    """The first `nbytes` UTF-8 bytes of corpus/*.txt (sorted), cut back to the last line end."""
    parts, size = [], 0
    for path in sorted(glob.glob(os.path.join(corpus, "*.txt"))):
        with open(path, "rb") as f:
            data = f.read(nbytes - size)
        parts.append(data)
        size += len(data)
        if size >= nbytes:
            break
    raw = b"".join(parts)
    cut = raw.rfind(b"\n")
    return (raw[: cut + 1] if cut >= 0 else raw).decode("utf-8")


def _data(corpus: str, nbytes: int, mode: str):
    text = read_corpus(corpus, nbytes)
    if mode == "whole":
        return text
    lines = lines_of(text)
    return pairs_of(lines) if mode == "pairs" else lines


def fresh_copies(text: str, calls: int):
    """A callable giving a new copy of `text` each call (made ahead, `calls` of them): the same
    characters in a str object that no encoder has read yet. Python keeps a str's UTF-8 once some
    code asks for it, so encoding one object again and again measures a cached conversion."""
    copies = [text[:-1] + text[-1:] for _ in range(calls)]

    def take():
        if not copies:
            raise RuntimeError("more calls than fresh copies were made")
        return copies.pop()
    return take


def input_mb(corpus: str, nbytes: int) -> float:
    return len(read_corpus(corpus, nbytes).encode("utf-8")) / 1e6


# ---------------------------------------------------------------------------------------- tasks
def tokkit_task(vocab_dir: str, corpus: str, nbytes: int, api: str, threads: int = 1, calls: int = 0):
    """tokkit: api is "numpy" (encode_to_numpy, whole text), "fresh" (the same on a new str each call,
    `calls` of them), "list" (encode, whole text),
    "flat" (encode_batch_flat, lines), "batch" (encode_batch, lines) or "pairs" (tokkit.encode)."""
    tok = tokkit.load(vocab_dir)
    if api == "fresh":
        take = fresh_copies(_data(corpus, nbytes, "whole"), calls)
        return lambda: tok.encode_to_numpy(take())
    if api in ("numpy", "list"):
        text = _data(corpus, nbytes, "whole")
        return (lambda: tok.encode_to_numpy(text)) if api == "numpy" else (lambda: tok.encode(text))
    if api == "pairs":
        a, b = _data(corpus, nbytes, "pairs")
        return lambda: tokkit.encode(tok, a, b, max_length=128, truncation="longest_first", padding="max_length",
                                     num_threads=threads)
    lines = _data(corpus, nbytes, "lines")
    if api == "flat":
        return lambda: tok.encode_batch_flat(lines, num_threads=threads)
    return lambda: tok.encode_batch(lines, num_threads=threads)


def gigatoken_task(vocab_dir: str, corpus: str, nbytes: int, api: str, calls: int = 0):
    """gigatoken: "numpy" (encode, whole text), "fresh" (the same on a new str each call), "list"
    (encode(...).tolist()), "padded"
    (encode_batch_padded over lines, max_length=128) or "batch_list" (encode_batch_list)."""
    tok = gigatoken_file(vocab_dir)
    if api == "fresh":
        take = fresh_copies(_data(corpus, nbytes, "whole"), calls)
        return lambda: tok.encode(take())
    if api in ("numpy", "list"):
        text = _data(corpus, nbytes, "whole")
        return (lambda: tok.encode(text)) if api == "numpy" else (lambda: tok.encode(text).tolist())
    lines = _data(corpus, nbytes, "lines")
    if api == "padded":
        return lambda: tok.encode_batch_padded(lines, pad_id=0, max_length=128)
    return lambda: tok.encode_batch_list(lines)


def tokie_task(vocab_dir: str, corpus: str, nbytes: int, api: str):
    """tokie (Tokenizer.from_json): "numpy" (encode, whole text) or "flat" (encode_batch_flat over lines);
    without template specials. Its threads follow RAYON_NUM_THREADS."""
    tok = tokie_file(vocab_dir)
    if api == "numpy":
        text = _data(corpus, nbytes, "whole")
        return lambda: tok.encode(text, add_special_tokens=False).ids
    lines = _data(corpus, nbytes, "lines")
    return lambda: tok.encode_batch_flat(lines, add_special_tokens=False)


# ---------------------------------------------------------------------------------------- suite
def plan(vocab: dict, corpus: str, nbytes: int, before: str | None, slice_path: str = "", repeat: int = 3) -> list:
    """(group, threads, target, {contender: (module needed, setup, kwargs, uses the older tree)})."""
    def k(kind, api, **extra):
        return {"vocab_dir": vocab[kind], "corpus": corpus, "nbytes": nbytes, "api": api, **extra}

    def old(kind, mode, threads=1):
        # the older tree's own encode_tasks (this module is not in it), on a copy of the slice
        if not before:
            return {}
        kwargs = {"vocab_dir": vocab[kind], "text_path": slice_path, "threads": threads}
        if mode == "pairs":
            return {"tokkit (before)": (None, OLD + "tokkit_pairs", kwargs, True)}
        return {"tokkit (before)": (None, OLD + "tokkit_encode", dict(kwargs, mode=mode), True)}

    bl = "bytelevel"
    return [
        ("bytelevel 50,257: whole text, 1 thread", 1, "encode_to_numpy >= 1.0x gigatoken encode", {
            "tokkit encode_to_numpy": (None, T + "tokkit_task", k(bl, "numpy"), False),
            "tokkit encode (list)": (None, T + "tokkit_task", k(bl, "list"), False),
            **old(bl, "whole"),
            "gigatoken encode": ("gigatoken", T + "gigatoken_task", k(bl, "numpy"), False),
            "gigatoken encode().tolist()": ("gigatoken", T + "gigatoken_task", k(bl, "list"), False),
            "tokie encode().ids": ("tokie", T + "tokie_task", k(bl, "numpy"), False)}),
        ("bytelevel 50,257: whole text, a new str each call, 1 thread", 1, "(no target: without Python's cached UTF-8)", {
            "tokkit encode_to_numpy": (None, T + "tokkit_task", k(bl, "fresh", calls=repeat + WARMUP), False),
            "gigatoken encode": ("gigatoken", T + "gigatoken_task", k(bl, "fresh", calls=repeat + WARMUP), False)}),
        ("bytelevel 50,257: lines", 2, "2 threads >= 1.0x gigatoken encode_batch_padded, >= 1.8x 1 thread", {
            "tokkit encode_batch_flat, 2 threads": (None, T + "tokkit_task", k(bl, "flat", threads=2), False),
            "tokkit encode_batch_flat, 1 thread": (None, T + "tokkit_task", k(bl, "flat", threads=1), False),
            "tokkit encode_batch (list), 2 threads": (None, T + "tokkit_task", k(bl, "batch", threads=2), False),
            "tokkit encode_batch (list), 1 thread": (None, T + "tokkit_task", k(bl, "batch", threads=1), False),
            "gigatoken encode_batch_padded(128)": ("gigatoken", T + "gigatoken_task", k(bl, "padded"), False),
            "gigatoken encode_batch_list": ("gigatoken", T + "gigatoken_task", k(bl, "batch_list"), False),
            "tokie encode_batch_flat": ("tokie", T + "tokie_task", k(bl, "flat"), False)}),
        ("wordpiece 30,000: lines, 1 thread", 1, "encode_batch_flat >= 3x list encode_batch", {
            "tokkit encode_batch_flat": (None, T + "tokkit_task", k("wordpiece", "flat"), False),
            "tokkit encode_batch (list)": (None, T + "tokkit_task", k("wordpiece", "batch"), False),
            **old("wordpiece", "lines"),
            "tokie encode_batch_flat": ("tokie", T + "tokie_task", k("wordpiece", "flat"), False)}),
        ("char bpe 32,000: lines, 1 thread", 1, "encode_batch_flat >= 3x list encode_batch", {
            "tokkit encode_batch_flat": (None, T + "tokkit_task", k("bpe", "flat"), False),
            "tokkit encode_batch (list)": (None, T + "tokkit_task", k("bpe", "batch"), False),
            **old("bpe", "lines")}),
        ("wordpiece 30,000: pairs -> padded numpy (128), 2 threads", 2, "after >= 2x before", {
            "tokkit.encode": (None, T + "tokkit_task", k("wordpiece", "pairs", threads=2), False),
            **old("wordpiece", "pairs", threads=2)}),
    ]


def run_suite(corpus: str, workdir: str, *, mb: float = 10.0, repeat: int = 3, before: str | None = None,
              only: set | None = None, log=print) -> list[dict]:
    """Train the three vocabularies (kept in workdir), then measure each group; returns report rows."""
    nbytes = int(mb * 1e6)
    vocab = {}
    for algo, size in VOCABS.items():
        vocab[algo] = os.path.join(workdir, f"{algo}-{size}")
        if not os.path.isfile(os.path.join(vocab[algo], "tokenizer.json")):
            log(f"training {algo} {size} on {corpus}")
            note = train_vocab(corpus, algo, size, vocab[algo])
            if note:
                log(note)
    work = input_mb(corpus, nbytes)
    slice_path = os.path.join(workdir, "slice.txt")
    if before:
        with open(slice_path, "w", encoding="utf-8") as f:
            f.write(read_corpus(corpus, nbytes))
    os.chdir(workdir)  # workers start here: the current folder must not shadow --before on sys.path
    rows = []
    for group, threads, target, candidates in plan(vocab, corpus, nbytes, before, slice_path, repeat):
        if only and not any(word in group for word in only):
            continue
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads), OMP_NUM_THREADS="1")
        envs, tasks, notes = {}, {}, {}
        for name, (module, setup, kwargs, is_old) in candidates.items():
            note = skip_note(module)
            if note:
                notes[name] = note
                continue
            tasks[name] = (setup, kwargs)
            if is_old:
                envs[name] = dict(env, PYTHONPATH=os.pathsep.join([before, *filter(None, [env.get("PYTHONPATH")])]))
        log(f"{group} ({work:.1f} MB)")
        results = measure_tasks(tasks, repeat=repeat, warmup=WARMUP, env=env, envs={n: envs.get(n, env) for n in tasks},
                                log=log)
        rows += group_rows("encode-numpy", group, results, baseline=next(iter(tasks)), work=work, unit="MB/s",
                           notes=notes, target=target)
    return rows


def markdown(rows: list[dict]) -> str:
    """The rows as one markdown table per group: median MB/s and speed relative to the group's first row."""
    out, group = [], None
    for row in rows:
        if row["group"] != group:
            group = row["group"]
            out += ["", f"**{group}**" + (f" (target: {row['target']})" if row.get("target") else ""), "",
                    "| contender | median s | MB/s | speed vs first row | supports |", "|---|---|---|---|---|"]
        name = row["name"]
        family = next((f for f in KINDS if name.startswith(f)), "")
        if not row.get("times"):
            out.append(f"| {name} | | | {row.get('note', '')} | {KINDS.get(family, '')} |")
            continue
        speed = "1.00x" if row["baseline"] else f"{row['time_ratio']:.2f}x"
        out.append(f"| {name} | {row['median']:.3f} | {row['throughput']:.1f} | {speed} | {KINDS.get(family, '')} |")
    return "\n".join(out).strip() + "\n"
