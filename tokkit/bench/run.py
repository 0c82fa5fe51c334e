"""`tokkit bench` as a function: pick suites, slice the corpus, run, write results.json/.md and charts.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time

from tokkit._files import atomic_write, prepare_folder
from tokkit.bench import charts
from tokkit.bench.bert_suite import run_bert_suite
from tokkit.bench.corpus_slice import make_slice, slice_file
from tokkit.bench.encode_suite import run_encode_suite
from tokkit.bench.harness import require_psutil
from tokkit.bench.hub_suite import run_hub_suite
from tokkit.bench.machine import machine_info
from tokkit.bench.mask_suite import run_mask_suite
from tokkit.bench.pattern_suite import run_patterns_suite
from tokkit.bench.report import format_table, suite_markdown, write_json
from tokkit.bench.scaling import LENGTHS, SIZES_MB, VOCABS, encode_scaling, scaling_charts, train_scaling
from tokkit.bench.train_suite import run_train_suite
from tokkit.errors import TokkitError

SUITES = {"train": ("train",), "encode": ("encode",), "mask": ("mask",), "bert": ("bert",),
          "all": ("train", "encode", "mask", "bert"), "scaling": ("scaling",), "hub": ("hub",),
          "patterns": ("patterns",)}
DEFAULT_REPEAT = {"train": 3, "encode": 5, "mask": 5, "bert": 8, "scaling": 1, "hub": 5, "patterns": 3}
DESCRIPTIONS = {
    "train": "Whole-process wall time of training (imports and file writing included) and peak RSS of the "
             "process tree sampled every 20 ms; one warm-up round, then the repeats with contenders alternating. "
             "MB/s = corpus MB / median.",
    "encode": "In-process wall time of one call, each contender in its own worker process, alternating after a "
              "warm-up; MB/s = UTF-8 MB of input / median. Vocabularies trained by tokkit on the same slice. "
              "Lines = the non-empty lines; pairs = lines (2i, 2i+1).",
    "mask": "One pass over 16,384 x 128 int64 ids in batches of 256 with special_tokens_mask given; inputs that a "
            "contender modifies are copied before each run, outside the timer.",
    "bert": "One forward + backward + AdamW step (gradient clipping included) at 4 layers x 256 hidden, batch "
            "32 x 128 without padding, 15% of positions labelled, NSP labels; tokens/s = 4,096 / median step.",
    "scaling": "Train time vs corpus size and vocab size (whole process, contenders alternating, no warm-up "
               "round: the input file is freshly written and cached), encode time of one string vs its length for "
               "ordinary and pathological inputs (in-process, 1 thread; a warm-up run below 1 MB, none from 1 MB on; "
               "a run over 60 s is stopped). "
               "Notes give seconds per MB at each series' ends: a flat figure means linear cost.",
    "hub": "Hub-style SentencePiece files (16k XLM-R-style Unigram, 16k Llama-2-style BPE with byte fallback, "
           "trained by sentencepiece and converted by transformers): encode_batch_flat on 1 thread against "
           "tokenizers encode_batch, sentencepiece encode and tokie encode_batch_flat (RAYON_NUM_THREADS=1), each "
           "in its own worker process, alternating after warm-up rounds; MB/s = UTF-8 MB of the lines / median. "
           "Notes say whether each contender's ids equal tokenizers' and which targets tokkit met.",
    "patterns": "Today's byte-level files (GPT-2, ModernBERT/OLMo, Llama 3, Qwen2, o200k; --vocab-size tokens, "
                "trained by tokenizers on en/wiki 000-019): one whole string (80% held-out en/wiki, 20% "
                "multilingual), 1 thread: tokkit encode_to_numpy against gigatoken encode, tokenizers encode and, "
                "for o200k and Llama 3, tiktoken encode_ordinary, each in its own worker process, alternating after "
                "warm-up rounds; MB/s = UTF-8 MB / median. Notes say whether each contender's ids equal tokkit's.",
}


def parse_algos(text: str | None) -> tuple[str, ...] | None:
    """'bytelevel,wordpiece' -> a tuple; None (each suite's default) when not given."""

    if not text:
        return None
    algos = tuple(a.strip() for a in text.split(",") if a.strip())
    bad = [a for a in algos if a not in ("bytelevel", "bpe", "wordpiece")]
    if bad or not algos:
        raise TokkitError(f"--algos: unknown algorithm {', '.join(bad) or text!r} (bytelevel, bpe, wordpiece)")
    return algos


def run_bench(*, suite: str = "all", corpus: list[str] | None = None, size: int | None = None,
              vocab_size: int = 32000, repeat: int | None = None, threads: int = 2, output: str = "tokkit-bench",
              algos: tuple[str, ...] | None = None, command: str = "tokkit bench",
              log=None, echo=print) -> dict:
    """Run the suites of `suite` and write results.json, results.md and charts into `output`."""

    log = log or (lambda m: print(m, file=sys.stderr, flush=True))
    started = time.perf_counter()
    require_psutil()
    prepare_folder(output)  # fail before a long run, not after it
    suites = SUITES[suite]
    hub_size = size  # the hub and patterns suites' texts have their own defaults
    if size is None:
        size = 200_000_000 if suite == "scaling" else 10_000_000
    payload = {"command": command, "suites": list(suites), "machine": machine_info(), "rows": [], "notes": [],
               "descriptions": {s: DESCRIPTIONS[s] for s in suites}, "charts": {}}
    work = tempfile.mkdtemp(prefix="tokkit-bench-")
    try:
        needs_corpus = any(s in ("train", "encode", "scaling") for s in suites)
        if needs_corpus:
            sl = make_slice(list(corpus) if corpus else None, size=size, workdir=work)
            what = ", ".join(corpus) if corpus else "the embedded default corpus (CPython's pydoc topics)"
            payload["input"] = f"{sl.mb:.2f} MB line-aligned prefix of {what} ({len(sl.sources)} files)"
            if sl.note:
                payload["notes"].append(sl.note)
                echo(f"note: {sl.note}")
        for name in suites:
            n = repeat or DEFAULT_REPEAT[name]
            if name == "train":
                rows = run_train_suite([sl.path], algos=algos or ("bytelevel", "bpe", "wordpiece"),
                                       vocab_size=vocab_size, workers=threads, repeat=n, log=log, mb=sl.mb)
            elif name == "encode":
                rows, notes = run_encode_suite(sl.path, work, vocab_size=vocab_size, threads=threads, repeat=n,
                                               log=log)
                payload["notes"] += notes
            elif name == "mask":
                rows = run_mask_suite(threads=threads, repeat=n, log=log)
            elif name == "bert":
                rows = run_bert_suite(threads=threads, repeat=n, log=log)
            elif name == "hub":
                rows, notes = run_hub_suite(corpus=corpus, size=hub_size, repeat=n, log=log)
                payload["notes"] += notes
            elif name == "patterns":
                rows, notes = run_patterns_suite(corpus=corpus, size=hub_size, vocab_size=vocab_size, repeat=n,
                                                 log=log)
                payload["notes"] += notes
            else:
                rows = _scaling(sl, work, algos=algos or ("bytelevel", "wordpiece"), vocab_size=vocab_size,
                                threads=threads, repeat=n, size=size, payload=payload, log=log)
            payload["rows"] += rows
        _charts(payload, output, charts)
        payload["wall_s"] = time.perf_counter() - started
        write_json(os.path.join(output, "results.json"), payload)
        atomic_write(os.path.join(output, "results.md"), suite_markdown(payload))
        echo(format_table(payload["rows"]))
        for note in payload["notes"]:
            echo(f"note: {note}")
        echo(f"wrote {os.path.join(output, 'results.json')}, results.md and "
             f"{sum(len(v) for v in payload['charts'].values())} charts")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return payload


def _scaling(sl, work, *, algos, vocab_size, threads, repeat, size, payload, log):

    sizes = [mb for mb in SIZES_MB if mb * 1e6 <= size] or [size / 1e6]
    if size / 1e6 not in sizes and size / 1e6 > sizes[-1]:
        sizes.append(round(size / 1e6, 1))
    rows, notes = train_scaling(sl, work, algos=algos, sizes_mb=sizes,
                                vocab_size=vocab_size, vocab_sizes=VOCABS, vocab_at_mb=min(25, sl.mb),
                                workers=threads, repeat=repeat, log=log)
    payload["notes"] += notes
    enc_text = slice_file(sl, 10_000_000, work, "encode") if sl.nbytes > 10_000_000 else sl
    erows, enotes = encode_scaling(enc_text.path, work, vocab_size=vocab_size,
                                   lengths=[n for n in LENGTHS if n <= max(size, LENGTHS[0])], threads=threads,
                                   repeat=repeat, timeout=60.0, log=log)
    payload["notes"] += enotes
    return rows + erows


def _charts(payload: dict, output: str, charts) -> None:
    if not charts.have_matplotlib():
        payload["chart_note"] = charts.missing_note()
        return
    for suite in payload["suites"]:
        rows = [r for r in payload["rows"] if r["suite"] == suite]
        if suite == "scaling":
            paths = scaling_charts(rows, output)
        else:
            p = charts.bar_chart(rows, os.path.join(output, f"{suite}.png"), title=f"tokkit bench: {suite}")
            paths = [p] if p else []
        payload["charts"][suite] = [os.path.basename(p) for p in paths]
