"""Masking speed: tokkit.mask_tokens against transformers' DataCollatorForLanguageModeling.

Both mask the same 16,384 sequences (batches of 256 x 128 int64 with a special_tokens_mask:
[CLS] first, [SEP] last, a padded tail on a quarter of the rows), with 2 threads allowed each.
Input copies (torch_mask_tokens writes into its input) are made outside the timer. Repeats alternate
between the contenders; prints the median over repeats, sequences per second and the ratio.

    python benchmarks/bench_mask.py [--repeats 5] [--sequences 16384]

The batches and the collator are tokkit.bench.mask_suite's (the `tokkit bench --suite mask`
measurement, which runs each contender in its own process instead).
"""
import argparse
import statistics
import sys
import time
import warnings

import numpy as np

from tokkit.bench.mask_suite import CLS, MASK_ID, PAD, SEP, UNK, VOCAB, hf_collator, make_batches


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

    specials = [PAD, UNK, CLS, SEP, MASK_ID]
    start = time.perf_counter()
    for ids, special in batches:
        masked, labels = tokkit.mask_tokens(ids, special, vocab_size=VOCAB, mask_token_id=MASK_ID,
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
    collator = hf_collator()
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
