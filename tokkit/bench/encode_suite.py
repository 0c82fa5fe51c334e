"""Encoding speed: tokkit's encoder against tiktoken, tokenizers and transformers on the same vocabularies.

The measurements behind benchmarks/bench_encode.py, median of `repeat` runs after WARMUP untimed rounds,
the slice's UTF-8 megabytes / wall time (for lines and pairs too, as bench_encode.py), contenders
alternating, each in its own worker process:

1. byte-level, whole text, 1 thread: tokkit `encode_to_numpy` vs gigatoken, fastokens and tiktoken
   (same merges, r50k_base's spelling of the GPT-2 pattern, `encode_ordinary`);
2. byte-level, `encode_batch(lines)`, 2 threads: tokkit vs tokenizers and tiktoken;
2b. byte-level lines to flat ids, 1 and 2 threads: tokkit `encode_batch_flat` vs gigatoken
   `encode_batch` and fastokens `encode_batch_flat`;
3. WordPiece, `encode_batch(lines)`, 2 threads: tokkit vs tokenizers (`add_special_tokens=False`)
   and transformers' fast tokenizer;
3b. WordPiece lines to flat ids, 1 and 2 threads: tokkit `encode_batch_flat` vs nanotoken (flat ids +
   offsets) and tokenizers >= 1.0, each skipped with its reason where the environment lacks it (run
   `tokkit bench` from an environment holding them);
4. pairs (lines 2i, 2i+1) to padded numpy, max_length 128, longest_first, 2 threads: tokkit.encode
   vs tokenizers (truncation + padding + conversion to numpy) and transformers (`return_tensors="np"`);
5. tokkit's own WordPiece `encode_batch`: 2 threads against 1 thread.

The vocabularies (byte-level and WordPiece, `vocab_size` each) are trained by tokkit on the slice.
"""
from __future__ import annotations

import os
import subprocess
import sys

from tokkit.bench.contenders import installed, split_installed
from tokkit.bench.encode_tasks import input_mb
from tokkit.bench.harness import measure_tasks
from tokkit.bench.report import group_rows

T = "tokkit.bench.encode_tasks:"
# Untimed rounds before timing: tokkit's per-thread piece tables (and the contenders' caches) fill
# over the first calls, and with 2 threads each table sees half of a call's text, so one round
# leaves them cold.
WARMUP = 3

# If tokkit cannot train (e.g. a broken build), the suite still measures the encoders on vocabularies
# trained by `tokenizers` with the same settings, and says so.
FALLBACK = """
import sys
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
out, algo, size, paths = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
S = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
if algo == "wordpiece":
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tr = trainers.WordPieceTrainer(vocab_size=size, special_tokens=S, show_progress=False)
else:
    S.remove("[UNK]")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(vocab_size=size, special_tokens=S, show_progress=False,
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train(paths, tr)
tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")), ("[CLS]", tok.token_to_id("[CLS]")))
import os; os.makedirs(out, exist_ok=True)
tok.save(out + "/tokenizer.json")
"""


def train_vocab(text_path: str, algo: str, vocab_size: int, out: str, *, workers: int = 2) -> str:
    """Train `algo` with tokkit (in a subprocess); on failure with tokenizers. Returns a note ('' if tokkit)."""
    cmd = [sys.executable, "-m", "tokkit.cli", "train", "--algo", algo, "--vocab-size", str(vocab_size),
           "--workers", str(workers), "-q", "--force", "-o", out, text_path]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 0:
        return ""
    why = next((x for x in reversed(proc.stderr.splitlines()) if x.strip()), "no message").strip()[:200]
    if not installed("tokenizers"):
        raise RuntimeError(f"tokkit train --algo {algo} failed: {why}")
    train_with_tokenizers([text_path], algo, vocab_size, out)
    return f"tokkit could not train the {algo} vocabulary ({why}); its vocabulary was trained by tokenizers"


def train_with_tokenizers(paths: list[str], algo: str, vocab_size: int, out: str, *, python: str = sys.executable
                          ) -> None:
    """Train `algo` ("wordpiece": bert-base-uncased's shape; else byte-level BPE) with `tokenizers` run by
    `python` (an interpreter whose tokenizers can train) on `paths`, saved as out/tokenizer.json."""
    subprocess.run([python, "-c", FALLBACK, out, algo, str(vocab_size), *paths], check=True, capture_output=True)


def _tasks(candidates: dict, notes: dict, log=print) -> dict:
    """Keep the contenders whose module is installed; note the others as skipped, and say so."""
    tasks, skipped = split_installed(candidates, log=lambda m: log(f"encode: {m}"))
    notes.update(skipped)
    return tasks


def _frontier_group(vocab: str, text_path: str, threads: int, env: dict) -> tuple:
    """WordPiece lines to flat ids on `threads` threads: tokkit against nanotoken and tokenizers >= 1.0,
    each skipped (with the reason) where it is not installed."""
    th = f"{threads} thread{'s' if threads > 1 else ''}"
    return (f"wordpiece encode_batch_flat(lines), {th}", "lines", env, "tokkit/nanotoken speed >= 1.0x", {
        "tokkit": (None, T + "tokkit_flat", {"vocab_dir": vocab, "text_path": text_path, "threads": threads}),
        "nanotoken": ("nanotoken", T + "nanotoken_flat", {"vocab_dir": vocab, "text_path": text_path,
                                                         "threads": threads}),
        "tokenizers >= 1.0": ("tokenizers>=1.0", T + "tokenizers_encode", {"vocab_dir": vocab,
                                                                         "text_path": text_path})})


def _bytelevel_flat_group(vocab: str, text_path: str, threads: int, env: dict) -> tuple:
    """Byte-level lines to flat ids on `threads` threads: tokkit against gigatoken and fastokens."""
    th = f"{threads} thread{'s' if threads > 1 else ''}"
    where = {"vocab_dir": vocab, "text_path": text_path}
    return (f"bytelevel encode_batch_flat(lines), {th}", "lines", env, "tokkit speed >= 1.0x each", {
        "tokkit": (None, T + "tokkit_flat", dict(where, threads=threads)),
        "gigatoken": ("gigatoken", T + "gigatoken_encode", dict(where, mode="lines", threads=threads)),
        "fastokens": ("fastokens", T + "fastokens_encode", dict(where, mode="lines"))})


def run_encode_suite(text_path: str, workdir: str, *, vocab_size: int = 32000, threads: int = 2, repeat: int = 5,
                     log=print) -> tuple[list[dict], list[str]]:
    """Run the encode measurements; return (rows, notes)."""

    notes_out = []
    vocab = {}
    for algo in ("bytelevel", "wordpiece"):
        vocab[algo] = os.path.join(workdir, f"vocab-{algo}")
        log(f"encode: training the {algo} vocabulary ({vocab_size})")
        note = train_vocab(text_path, algo, vocab_size, vocab[algo], workers=threads)
        if note:
            notes_out.append(note)
    mb = {m: input_mb(text_path) for m in ("whole", "lines", "pairs")}
    bl, wp = vocab["bytelevel"], vocab["wordpiece"]
    one = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1")
    many = dict(os.environ, RAYON_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    th = f"{threads} thread{'s' if threads > 1 else ''}"
    plan = [
        ("bytelevel whole text to ids, 1 thread", "whole", one, "tokkit speed >= 1.0x each", {
            "tokkit": (None, T + "tokkit_numpy", {"vocab_dir": bl, "text_path": text_path}),
            "gigatoken": ("gigatoken", T + "gigatoken_encode", {"vocab_dir": bl, "text_path": text_path}),
            "fastokens": ("fastokens", T + "fastokens_encode", {"vocab_dir": bl, "text_path": text_path}),
            "tiktoken (r50k pattern)": ("tiktoken", T + "tiktoken_encode", {"vocab_dir": bl, "text_path": text_path})}),
        *[_bytelevel_flat_group(bl, text_path, n, env) for n, env in ((1, one), (threads, many))],
        (f"bytelevel encode_batch(lines), {th}", "lines", many, None, {
            "tokkit": (None, T + "tokkit_encode",
                       {"vocab_dir": bl, "text_path": text_path, "mode": "lines", "threads": threads}),
            "tokenizers": ("tokenizers", T + "tokenizers_encode", {"vocab_dir": bl, "text_path": text_path}),
            "tiktoken (r50k pattern)": ("tiktoken", T + "tiktoken_batch",
                                        {"vocab_dir": bl, "text_path": text_path, "threads": threads})}),
        (f"wordpiece encode_batch(lines), {th}", "lines", many, "tokkit/tokenizers speed >= 5x", {
            "tokkit": (None, T + "tokkit_encode",
                       {"vocab_dir": wp, "text_path": text_path, "mode": "lines", "threads": threads}),
            "tokenizers": ("tokenizers", T + "tokenizers_encode", {"vocab_dir": wp, "text_path": text_path}),
            "transformers (fast tokenizer)": ("transformers", T + "transformers_lines",
                                              {"vocab_dir": wp, "text_path": text_path})}),
        (f"wordpiece pairs -> padded numpy (128, longest_first), {th}", "pairs", many,
         "tokkit/tokenizers speed >= 3x", {
             "tokkit": (None, T + "tokkit_pairs", {"vocab_dir": wp, "text_path": text_path, "threads": threads}),
             "tokenizers (+ numpy)": ("tokenizers", T + "tokenizers_pairs", {"vocab_dir": wp, "text_path": text_path}),
             "transformers (return_tensors=np)": ("transformers", T + "transformers_pairs",
                                                  {"vocab_dir": wp, "text_path": text_path})}),
        *[_frontier_group(wp, text_path, n, env) for n, env in ((1, one), (threads, many))],
        (f"tokkit wordpiece encode_batch: {th} vs 1", "lines", many, "speed-up over 1 thread >= 1.6x", {
            f"tokkit, {th}": (None, T + "tokkit_encode",
                              {"vocab_dir": wp, "text_path": text_path, "mode": "lines", "threads": threads}),
            "tokkit, 1 thread": (None, T + "tokkit_encode",
                                 {"vocab_dir": wp, "text_path": text_path, "mode": "lines", "threads": 1})}),
    ]
    rows = []
    for group, mode, env, target, candidates in plan:
        notes: dict[str, str] = {}
        tasks = _tasks(candidates, notes, log)
        log(f"encode: {group} ({mb[mode]:.1f} MB)")
        results = measure_tasks(tasks, repeat=repeat, warmup=WARMUP, env=env, log=log)
        baseline = next(iter(candidates))
        rows += group_rows("encode", group, results, baseline=baseline, work=mb[mode], unit="MB/s", notes=notes,
                           target=target, remarks={"tiktoken (r50k pattern)": "same merges, ranks in merge order"})
    return rows, notes_out
