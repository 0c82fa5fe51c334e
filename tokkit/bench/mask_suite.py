"""Masking speed: `tokkit.mask_tokens` against transformers' collator and a plain numpy version.

The measurement of `tokkit bench --suite mask` and benchmarks/bench_mask.py: 16,384 sequences of 128 int64 ids in
batches of 256, `special_tokens_mask` given ([CLS] first, [SEP] last, a padded tail on a quarter
of the rows), vocab 30,522 with bert-base-uncased's special ids, 15% / 80-10-10, 2 threads each. Inputs a contender modifies in place are copied before each run,
outside the timer. Throughput = sequences / median wall time of one pass over all batches.
"""
from __future__ import annotations

import os
import tempfile

import numpy as np

import tokkit
from tokkit.bench.contenders import skip_note
from tokkit.bench.harness import measure_tasks
from tokkit.bench.report import group_rows

VOCAB = 30522
PAD, UNK, CLS, SEP, MASK_ID = 0, 100, 101, 102, 103  # bert-base-uncased's ids
SPECIALS = (PAD, UNK, CLS, SEP, MASK_ID)


def make_batches(sequences: int = 16384, batch: int = 256, length: int = 128, seed: int = 0):
    """(ids, special_tokens_mask) batches laid out as BERT's: [CLS] first, [SEP] last, and a padded
    tail on about a quarter of the rows (flagged special too)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(max(1, sequences // batch)):
        ids = rng.integers(1000, VOCAB, size=(batch, length), dtype=np.int64)
        special = np.zeros((batch, length), dtype=bool)
        lengths = np.where(rng.random(batch) < 0.25, rng.integers(8, length, size=batch), length)
        for r, n in enumerate(lengths):
            ids[r, 0], ids[r, n - 1], ids[r, n:] = CLS, SEP, PAD
            special[r, 0] = special[r, n - 1:] = True
        out.append((ids, special))
    return out


def tokkit_task(sequences: int = 16384, threads: int = 2, batch: int = 256, length: int = 128):
    """tokkit.mask_tokens over every batch, one Generator for the whole pass."""
    batches = make_batches(sequences, batch, length)
    rng = np.random.default_rng(0)

    def run():
        for ids, special in batches:
            masked, labels = tokkit.mask_tokens(ids, special, vocab_size=VOCAB, mask_token_id=MASK_ID,
                                                special_ids=SPECIALS, rng=rng)
    return run


def numpy_task(sequences: int = 16384, batch: int = 256, length: int = 128):
    """The plain vectorised numpy version (a reference point: about 4x transformers)."""
    batches = make_batches(sequences, batch, length)
    rng = np.random.default_rng(0)
    allowed = np.setdiff1d(np.arange(VOCAB), SPECIALS)

    def run():
        for ids, special in batches:
            chosen = (rng.random(ids.shape) < 0.15) & ~special
            labels = np.where(chosen, ids, -100)
            r = rng.random(ids.shape)
            masked = ids.copy()
            masked[chosen & (r < 0.8)] = MASK_ID
            rand = chosen & (r >= 0.8) & (r < 0.9)
            masked[rand] = allowed[rng.integers(0, len(allowed), int(rand.sum()))]
            del labels
    return run


def hf_collator():
    """transformers' DataCollatorForLanguageModeling over a vocab.txt with bert-base-uncased's special ids."""
    from transformers import BertTokenizerFast, DataCollatorForLanguageModeling

    tokens = [f"[unused{i}]" for i in range(VOCAB)]
    for i, name in ((PAD, "[PAD]"), (UNK, "[UNK]"), (CLS, "[CLS]"), (SEP, "[SEP]"), (MASK_ID, "[MASK]")):
        tokens[i] = name
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vocab.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(tokens) + "\n")
        tok = BertTokenizerFast(vocab_file=path)
    return DataCollatorForLanguageModeling(tok, mlm_probability=0.15, seed=0)


def transformers_task(sequences: int = 16384, threads: int = 2, batch: int = 256, length: int = 128):
    """transformers' DataCollatorForLanguageModeling.torch_mask_tokens on torch copies of the batches."""
    import torch

    torch.set_num_threads(threads)
    collator = hf_collator()
    batches = [(torch.from_numpy(ids), torch.from_numpy(special))
               for ids, special in make_batches(sequences, batch, length)]
    copies = []

    def prepare():  # torch_mask_tokens writes into its input: fresh copies, outside the timer
        copies[:] = [(ids.clone(), special) for ids, special in batches]

    def run():
        for ids, special in copies:
            masked, labels = collator.torch_mask_tokens(ids, special_tokens_mask=special)
    run.prepare = prepare
    return run


HF = "transformers (torch_mask_tokens)"


def masked_sequences(sequences: int, batch: int) -> int:
    """How many sequences `make_batches` lays out: whole batches, at least one.

    >>> masked_sequences(16384, 256), masked_sequences(1000, 256), masked_sequences(10, 256)
    (16384, 768, 256)
    """
    return max(1, sequences // batch) * batch


def run_mask_suite(*, sequences: int = 16384, threads: int = 2, repeat: int = 5, log=print, batch: int = 256,
                   length: int = 128, numpy: bool = True) -> list[dict]:
    """One measurement: sequences/s of tokkit, transformers and (with `numpy`) plain numpy.

    One warm-up round, then `repeat` rounds with the contenders alternating, each in its own worker.
    """
    M = "tokkit.bench.mask_suite:"
    shape = {"sequences": sequences, "batch": batch, "length": length}
    tasks = {"tokkit": (M + "tokkit_task", {**shape, "threads": threads})}
    notes = {}
    note = skip_note("transformers") or skip_note("torch")
    if note:
        notes[HF] = note
    else:
        tasks[HF] = (M + "transformers_task", {**shape, "threads": threads})
    if numpy:
        tasks["numpy (plain vectorised)"] = (M + "numpy_task", shape)
    n = masked_sequences(sequences, batch)
    group = f"mask_tokens: {n:,} x {length} int64 in batches of {batch}, {threads} threads"
    log(f"mask: {group}")
    results = measure_tasks(tasks, repeat=repeat, warmup=1, log=log)
    return group_rows("mask", group, results, baseline="tokkit", work=n, unit="seq/s", notes=notes,
                      target="tokkit/transformers speed >= 10x")
