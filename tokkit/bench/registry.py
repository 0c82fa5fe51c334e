"""Every `tokkit bench` suite as one registered object: its inputs, contenders, checks and defaults.

A `Suite` names what it compares, what it checks before timing (the ids, counts or word tables
every contender must agree on), its default rounds and how it is described in results.md; its
`run` takes the run's `Inputs` and returns (rows, notes). `tokkit bench --suite NAME` runs one,
`--suite all` the suites marked `in_all`, and `tokkit bench --list` prints `listing()`.

>>> "encode" in SUITES and SUITES["encode"].needs_slice and not SUITES["hub"].in_all
True
>>> names("all")
('train', 'encode', 'mask', 'bert')
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from typing import Callable

from tokkit.bench.bert_suite import run_bert_suite
from tokkit.bench.corpus_slice import CorpusSlice, slice_file
from tokkit.bench.count_suite import run_count_suite
from tokkit.bench.encode_numpy import run_suite as run_encode_numpy
from tokkit.bench.encode_suite import run_encode_suite
from tokkit.bench.engine_suite import run_engine_suite
from tokkit.bench.hub_suite import run_hub_suite
from tokkit.bench.mask_suite import run_mask_suite
from tokkit.bench.pattern_suite import run_patterns_suite
from tokkit.bench.scaling import LENGTHS, SIZES_MB, VOCABS, encode_scaling, train_scaling
from tokkit.bench.train_suite import run_train_suite
from tokkit.errors import TokkitError


@dataclass
class Inputs:
    """What a run hands each suite: the options of `tokkit bench` and a scratch folder."""

    corpus: list[str] | None = None  # --corpus paths; None: the suite's default corpus
    size: int | None = None  # --size in bytes; None: the suite's default
    vocab_size: int = 32000
    threads: int = 2
    repeat: int = 1
    algos: tuple[str, ...] | None = None
    work: str = "."  # scratch folder, removed after the run
    slice: CorpusSlice | None = None  # the line-aligned corpus prefix, for suites with needs_slice
    log: Callable = field(default=lambda m: None)


@dataclass(frozen=True)
class Suite:
    """One benchmark: what it measures against which contenders, what it checks, how it runs."""

    name: str
    summary: str  # one line for `tokkit bench --list`
    description: str  # how it measures, for results.md
    run: Callable[[Inputs], tuple[list, list]]
    repeat: int  # timed rounds when --repeat is not given
    contenders: tuple[str, ...]  # the libraries tokkit is measured against (each optional)
    checks: str = ""  # what every contender must agree on before any timing
    needs_slice: bool = False  # reads the sliced --corpus (default 10 MB of it)
    slice_size: int = 10_000_000
    in_all: bool = False  # part of `--suite all`


def _rows(rows) -> tuple[list, list]:
    return rows, []


def _train(i: Inputs):
    return _rows(run_train_suite([i.slice.path], algos=i.algos or ("bytelevel", "bpe", "wordpiece"),
                                 vocab_size=i.vocab_size, workers=i.threads, repeat=i.repeat, log=i.log, mb=i.slice.mb))


def _encode(i: Inputs):
    return run_encode_suite(i.slice.path, i.work, vocab_size=i.vocab_size, threads=i.threads, repeat=i.repeat,
                            log=i.log)


def _mask(i: Inputs):
    return _rows(run_mask_suite(threads=i.threads, repeat=i.repeat, log=i.log))


def _bert(i: Inputs):
    return _rows(run_bert_suite(threads=i.threads, repeat=i.repeat, log=i.log))


def _hub(i: Inputs):
    return run_hub_suite(corpus=i.corpus, size=i.size, repeat=i.repeat, log=i.log)


def _patterns(i: Inputs):
    return run_patterns_suite(corpus=i.corpus, size=i.size, vocab_size=i.vocab_size, repeat=i.repeat, log=i.log)


def _scaling(i: Inputs):
    """Train time against corpus and vocab size up to the slice's size, then encode time against length."""
    sl, size = i.slice, i.size or SUITES['scaling'].slice_size
    sizes = [mb for mb in SIZES_MB if mb * 1e6 <= size] or [size / 1e6]
    if size / 1e6 not in sizes and size / 1e6 > sizes[-1]:
        sizes.append(round(size / 1e6, 1))
    rows, notes = train_scaling(sl, i.work, algos=i.algos or ("bytelevel", "wordpiece"), sizes_mb=sizes,
                                vocab_size=i.vocab_size, vocab_sizes=VOCABS, vocab_at_mb=min(25, sl.mb),
                                workers=i.threads, repeat=i.repeat, log=i.log)
    enc_text = slice_file(sl, 10_000_000, i.work, "encode") if sl.nbytes > 10_000_000 else sl
    erows, enotes = encode_scaling(enc_text.path, i.work, vocab_size=i.vocab_size,
                                   lengths=[n for n in LENGTHS if n <= max(size, LENGTHS[0])], threads=i.threads,
                                   repeat=i.repeat, timeout=60.0, log=i.log)
    return rows + erows, notes + enotes


CHECK_MB = 4.0  # the count suite compares the word counts on this prefix


def _count(i: Inputs):
    check = slice_file(i.slice, int(min(CHECK_MB, i.slice.mb) * 1e6), i.work, "check")
    rows, checks = run_count_suite(i.slice.path, i.slice.mb, check_path=check.path, check_mb=check.mb,
                                   threads=i.threads, repeat=i.repeat, log=i.log)
    notes = [f"count {mode}: counts identical to the reference on {check.mb:.1f} MB: {same}"
             for mode, same in checks.items() if same is not None]
    if any(same is False for same in checks.values()):
        raise TokkitError("count: tokkit's word counts differ from the reference's: " + "; ".join(notes))
    return rows, notes


def _engine(i: Inputs):
    return _rows(run_engine_suite([i.slice.path], vocab_size=i.vocab_size, repeat=i.repeat, log=i.log))


def _lazy(target: str) -> Callable:
    """A suite run that imports its module ("module:function") only when it runs: importing Dask would
    cost every `tokkit bench`, --list included, a quarter of a second."""
    def run(i: Inputs):
        module, _, name = target.partition(":")
        return getattr(importlib.import_module(module), name)(i)
    return run


def _encode_numpy(i: Inputs):
    folder = os.path.join(i.work, "numpy-corpus")
    os.makedirs(folder, exist_ok=True)
    os.replace(slice_file(i.slice, i.slice.nbytes, i.work, "numpy").path, os.path.join(folder, "slice.txt"))
    here = os.getcwd()  # the suite starts its workers from its work folder
    try:
        return _rows(run_encode_numpy(folder, i.work, mb=i.slice.mb, repeat=i.repeat, log=i.log))
    finally:
        os.chdir(here)


SUITES: dict[str, Suite] = {s.name: s for s in (
    Suite('train', 'Trainers: tokkit against tokenizers, sentencepiece, bpeasy, gigatoken (whole process, peak RSS)',
          'Whole-process wall time of training (imports and file writing included) and peak RSS of the process '
          'tree sampled every 20 ms; one warm-up round, then the repeats with contenders alternating. MB/s = '
          'corpus MB / median.',
          _train, 3, ('tokenizers', 'sentencepiece', 'bpeasy', 'gigatoken'), needs_slice=True, in_all=True),
    Suite('encode', 'Encoding: tokkit against tiktoken, tokenizers, transformers and nanotoken (in-process calls)',
          'In-process wall time of one call, each contender in its own worker process, alternating after a '
          'warm-up; MB/s = UTF-8 MB of input / median. Vocabularies trained by tokkit on the same slice. Lines '
          '= the non-empty lines; pairs = lines (2i, 2i+1).',
          _encode, 5, ('tiktoken', 'tokenizers', 'transformers', 'nanotoken'), needs_slice=True, in_all=True),
    Suite('mask', "MLM masking of id batches: tokkit against transformers' collator and plain numpy",
          'One pass over 16,384 x 128 int64 ids in batches of 256 with special_tokens_mask given; inputs that a'
          ' contender modifies are copied before each run, outside the timer.',
          _mask, 5, ('transformers', 'torch'), in_all=True),
    Suite('bert', "One BERT pretraining step: tokkit's model against transformers' BertForPreTraining",
          'One forward + backward + AdamW step (gradient clipping included) at 4 layers x 256 hidden, batch 32 '
          'x 128 without padding, 15% of positions labelled, NSP labels; tokens/s = 4,096 / median step.',
          _bert, 8, ('torch', 'transformers'), in_all=True),
    Suite('scaling', 'Train time against corpus and vocab size, encode time against input length',
          'Train time vs corpus size and vocab size (whole process, contenders alternating, no warm-up round: '
          'the input file is freshly written and cached), encode time of one string vs its length for ordinary '
          'and pathological inputs (in-process, 1 thread; a warm-up run below 1 MB, none from 1 MB on; a run '
          "over 60 s is stopped). Notes give seconds per MB at each series' ends: a flat figure means linear "
          'cost.',
          _scaling, 1, ('tokenizers', 'tiktoken'), needs_slice=True, slice_size=200_000_000),
    Suite('hub', 'Hub-style SentencePiece files (Unigram, BPE + byte fallback), 1 thread',
          'Hub-style SentencePiece files (16k XLM-R-style Unigram, 16k Llama-2-style BPE with byte fallback, '
          'trained by sentencepiece and converted by transformers): encode_batch_flat on 1 thread against '
          'tokenizers encode_batch, sentencepiece encode and tokie encode_batch_flat (RAYON_NUM_THREADS=1), '
          'each in its own worker process, alternating after warm-up rounds; MB/s = UTF-8 MB of the lines / '
          "median. Notes say whether each contender's ids equal tokenizers' and which targets tokkit met.",
          _hub, 5, ('tokenizers', 'sentencepiece', 'tokie'),
          checks="each contender's ids against tokenizers' on every line"),
    Suite('patterns', "Byte-level files of today's models (GPT-2 ... o200k), one whole string, 1 thread",
          "Today's byte-level files (GPT-2, ModernBERT/OLMo, Llama 3, Qwen2, o200k; --vocab-size tokens, "
          'trained by tokenizers on en/wiki 000-019): one whole string (80% held-out en/wiki, 20% '
          'multilingual), 1 thread: tokkit encode_to_numpy against gigatoken encode, tokenizers encode and, for'
          ' o200k and Llama 3, tiktoken encode_ordinary, each in its own worker process, alternating after '
          "warm-up rounds; MB/s = UTF-8 MB / median. Notes say whether each contender's ids equal tokkit's.",
          _patterns, 3, ('gigatoken', 'tokenizers', 'tiktoken'),
          checks="each contender's ids against tokkit's on the whole text (then per line)"),
    Suite('count', "Word counting: tokkit's WordCounter against regex.findall + Counter and tokenizers' BERT "
                   "pre-tokenizer",
          "tokkit's WordCounter on --threads threads against one-thread Python references (gpt2: regex.findall "
          "of the GPT-2 pattern per line + Counter, same bytes; bert: tokenizers' BertNormalizer + "
          'BertPreTokenizer per line + Counter on a prefix, its whole-input time extrapolated), each in its own'
          ' worker process, a warm-up round then alternating; the counts are checked equal on a prefix first.',
          _count, 3, ('regex', 'tokenizers'), checks="the word counts against the reference's on a 4 MB prefix",
          needs_slice=True),
    Suite('engine', "The merge engine alone on the slice's GPT-2-pretokenized words",
          "tokkit's compiled merge engine alone (frequency scoring, --vocab-size) on the slice's words split by"
          " the GPT-2 pattern; loading the words is the worker's setup, then the timed runs; wall and CPU "
          'seconds per train_merges.',
          _engine, 1, (), needs_slice=True),
    Suite('encode-numpy', 'Numpy-first encoding: flat outputs against lists, gigatoken and tokie',
          "tokkit's numpy outputs (encode_to_numpy, encode_batch_flat, padded pairs) against its list APIs, "
          'gigatoken and tokie on the slice, each in its own worker process, alternating after warm-up rounds; '
          'MB/s = UTF-8 MB / median.',
          _encode_numpy, 3, ('gigatoken', 'tokie', 'tokenizers'), needs_slice=True),
    Suite("dask", "Counting on a Dask LocalCluster against tokkit's local threads, and a 1 TB estimate",
          "tokkit's local counting (--workers 2) against a Dask LocalCluster of 2 single-threaded workers on the "
          "slice, each in its own worker process, a warm-up round then alternating; cluster start-up timed "
          "apart; per-worker MB/s gives the 1 TB estimates.",
          _lazy("tokkit.bench.dask_suite:run_from_inputs"), 3, ("dask",), checks="the two word tables are identical",
          needs_slice=True),
)}


def names(choice: str) -> tuple[str, ...]:
    """The suites `--suite choice` runs: one by name, or 'all' (the in_all suites)."""
    if choice == "all":
        return tuple(n for n, s in SUITES.items() if s.in_all)
    if choice not in SUITES:
        raise TokkitError(f"--suite: unknown suite {choice!r} (choose from {', '.join(choices())})")
    return (choice,)


def choices() -> list[str]:
    """What --suite accepts."""
    return [*SUITES, "all"]


def listing() -> str:
    """One block per suite for `tokkit bench --list`: name, summary, contenders, checks, default rounds."""
    out = []
    for s in SUITES.values():
        out.append(f"{s.name:<13} {s.summary}")
        extra = [f"contenders: {', '.join(s.contenders) or 'tokkit alone'}", f"rounds: {s.repeat}"]
        if s.checks:
            extra.append(f"checks: {s.checks}")
        if s.in_all:
            extra.append("in 'all'")
        out.append(" " * 14 + "; ".join(extra))
    return "\n".join(out)
