"""Masking speed: `tokkit.mask_tokens` against transformers' collator and a plain numpy version.

The measurement of issue 4 (benchmarks/bench_mask.py): 16,384 sequences of 128 int64 ids in
batches of 256, `special_tokens_mask` given ([CLS] first, [SEP] last), vocab 30,522, 15% / 80-10-10,
2 threads for each contender. Inputs a contender modifies in place are copied before each run,
outside the timer. Throughput = sequences / median wall time of one pass over all batches.

>>> run = numpy_task(sequences=512)
>>> run() is None
True
"""
from __future__ import annotations

import importlib.util

from tokkit.bench.harness import measure_tasks
from tokkit.bench.report import group_rows

VOCAB, MASK_ID, SPECIALS = 30522, 4, (0, 1, 2, 3, 4)


def make_batches(sequences: int = 16384, batch: int = 256, length: int = 128, seed: int = 0):
    """(ids, special_tokens_mask) int64 numpy batches: random ids, [CLS] first and [SEP] last."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for start in range(0, sequences, batch):
        rows = min(batch, sequences - start)
        ids = rng.integers(len(SPECIALS), VOCAB, size=(rows, length), dtype=np.int64)
        ids[:, 0], ids[:, -1] = 2, 3
        special = np.zeros_like(ids)
        special[:, 0] = special[:, -1] = 1
        out.append((ids, special))
    return out


def tokkit_task(sequences: int = 16384, threads: int = 2):
    """tokkit.mask_tokens over every batch, one Generator for the whole pass."""
    import numpy as np

    import tokkit

    batches = make_batches(sequences)
    rng = np.random.default_rng(1)

    def run():
        for ids, special in batches:
            tokkit.mask_tokens(ids, special, vocab_size=VOCAB, mask_token_id=MASK_ID, special_ids=SPECIALS, rng=rng)
    return run


def numpy_task(sequences: int = 16384):
    """The plain vectorised numpy version (issue 4's '4x transformers' reference point)."""
    import numpy as np

    batches = make_batches(sequences)
    rng = np.random.default_rng(1)
    allowed = np.arange(len(SPECIALS), VOCAB)

    def run():
        for ids, special in batches:
            chosen = (rng.random(ids.shape) < 0.15) & (special == 0)
            labels = np.where(chosen, ids, -100)
            r = rng.random(ids.shape)
            masked = ids.copy()
            masked[chosen & (r < 0.8)] = MASK_ID
            rand = chosen & (r >= 0.8) & (r < 0.9)
            masked[rand] = allowed[rng.integers(0, len(allowed), int(rand.sum()))]
            del labels
    return run


def transformers_task(sequences: int = 16384, threads: int = 2):
    """transformers' DataCollatorForLanguageModeling.torch_mask_tokens on torch copies of the batches."""
    import torch
    from tokenizers import Tokenizer, models
    from transformers import DataCollatorForLanguageModeling, PreTrainedTokenizerFast

    torch.set_num_threads(threads)
    names = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {t: i for i, t in enumerate(names)} | {f"t{i}": i for i in range(len(names), VOCAB)}
    tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="[UNK]")),
                                  pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                                  mask_token="[MASK]")
    collator = DataCollatorForLanguageModeling(tokenizer=tok, mlm_probability=0.15, seed=1)
    batches = [(torch.from_numpy(ids), torch.from_numpy(special)) for ids, special in make_batches(sequences)]
    copies = []

    def prepare():  # torch_mask_tokens writes into its input: fresh copies, outside the timer
        copies[:] = [(ids.clone(), special) for ids, special in batches]

    def run():
        for ids, special in copies:
            collator.torch_mask_tokens(ids, special_tokens_mask=special)
    run.prepare = prepare
    return run


def run_mask_suite(*, sequences: int = 16384, threads: int = 2, repeat: int = 5, log=print) -> list[dict]:
    """One measurement: sequences/s of tokkit, transformers and plain numpy."""
    M = "tokkit.bench.mask_suite:"
    tasks = {"tokkit": (M + "tokkit_task", {"sequences": sequences, "threads": threads})}
    notes = {}
    if importlib.util.find_spec("transformers") and importlib.util.find_spec("torch"):
        tasks["transformers (torch_mask_tokens)"] = (M + "transformers_task",
                                                     {"sequences": sequences, "threads": threads})
    else:
        notes["transformers (torch_mask_tokens)"] = "skipped: transformers or torch is not installed"
    tasks["numpy (plain vectorised)"] = (M + "numpy_task", {"sequences": sequences})
    group = f"mask_tokens: {sequences:,} x 128 int64 in batches of 256, {threads} threads"
    log(f"mask: {group}")
    results = measure_tasks(tasks, repeat=repeat, warmup=1, log=log)
    return group_rows("mask", group, results, baseline="tokkit", work=sequences, unit="seq/s", notes=notes,
                      target="tokkit/transformers speed >= 10x")
