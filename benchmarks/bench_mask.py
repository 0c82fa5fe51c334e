"""Masking speed: tokkit.mask_tokens against transformers' DataCollatorForLanguageModeling.

Both mask the same 16,384 sequences (batches of 256 x 128 int64 with a special_tokens_mask:
[CLS] first, [SEP] last, a padded tail on a quarter of the rows), with 2 threads allowed each.
Input copies (torch_mask_tokens writes into its input) are made outside the timer. Repeats alternate
between the contenders; prints the median over repeats, sequences per second and the ratio.

    python benchmarks/bench_mask.py [--repeats 5] [--sequences 16384]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

VOCAB = 30522
PAD, UNK, CLS, SEP, MASK = 0, 100, 101, 102, 103


def make_batches(sequences, batch, length, seed=0):
    """Random ids with BERT's layout; returns a list of (input_ids, special_tokens_mask)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(sequences // batch):
        ids = rng.integers(1000, VOCAB, size=(batch, length), dtype=np.int64)
        special = np.zeros((batch, length), dtype=bool)
        lengths = np.where(rng.random(batch) < 0.25, rng.integers(8, length, size=batch), length)
        for r, n in enumerate(lengths):
            ids[r, 0], ids[r, n - 1], ids[r, n:] = CLS, SEP, PAD
            special[r, 0] = special[r, n - 1:] = True
        out.append((ids, special))
    return out


def hf_collator(tmp):
    from transformers import BertTokenizerFast, DataCollatorForLanguageModeling

    tokens = [f"[unused{i}]" for i in range(VOCAB)]
    for i, tok in ((PAD, "[PAD]"), (UNK, "[UNK]"), (CLS, "[CLS]"), (SEP, "[SEP]"), (MASK, "[MASK]")):
        tokens[i] = tok
    path = os.path.join(tmp, "vocab.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(tokens) + "\n")
    tok = BertTokenizerFast(vocab_file=path)
    return DataCollatorForLanguageModeling(tok, mlm_probability=0.15, seed=0)


def time_hf(collator, batches):
    import torch

    copies = [(torch.from_numpy(ids.copy()), torch.from_numpy(special)) for ids, special in batches]
    start = time.perf_counter()
    for ids, special in copies:
        # Results are bound to a name, as a training loop would, for both contenders.
        masked, labels = collator.torch_mask_tokens(ids, special_tokens_mask=special)
    return time.perf_counter() - start


def time_tokkit(batches, rng):
    import tokkit

    specials = [PAD, UNK, CLS, SEP, MASK]
    start = time.perf_counter()
    for ids, special in batches:
        masked, labels = tokkit.mask_tokens(ids, special, vocab_size=VOCAB, mask_token_id=MASK,
                                            special_ids=specials, rng=rng)
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sequences", type=int, default=16384)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--length", type=int, default=128)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    import torch

    torch.set_num_threads(2)
    batches = make_batches(args.sequences, args.batch, args.length)
    n = len(batches) * args.batch
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        collator = hf_collator(tmp)
    time_hf(collator, batches[:2]), time_tokkit(batches[:2], rng)  # warm-up
    hf, tk = [], []
    for _ in range(args.repeats):  # interleaved, so both see the same machine load
        hf.append(time_hf(collator, batches))
        tk.append(time_tokkit(batches, rng))
    t_hf, t_tk = statistics.median(hf), statistics.median(tk)
    print(f"masking {n:,} sequences of {args.length} in batches of {args.batch}, median of {args.repeats}")
    print(f"  transformers torch_mask_tokens: {n / t_hf:>12,.0f} sequences/s")
    print(f"  tokkit.mask_tokens:             {n / t_tk:>12,.0f} sequences/s")
    print(f"  ratio tokkit / transformers:    {t_hf / t_tk:>12.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
