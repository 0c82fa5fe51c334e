"""Random pipelines against every route tokkit's planner has for them, for as long as given.

    python benchmarks/fuzz_routes.py --seconds 60 [--seed 0] [--show 5]

The check of tests/tokenizer/test_routes_differential.py (tests/helpers/routes.py): pipelines of
BERT, char BPE, byte-level, SentencePiece-like and mixed shapes trained and saved by tokenizers, with
random added tokens and flags, and hostile and multilingual texts; every route's ids (encode, encode_numpy,
encode_flat, encode_many) and offsets (encode_full) against tokenizers'. Prints how many
(pipeline, text) pairs it tried and how many disagreed, and the first disagreements with the seed
that finds them again.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from helpers.routes import build, describe, disagreements, random_case, random_texts, with_added_forms  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="how long to keep trying")
    ap.add_argument("--seed", type=int, default=0, help="the first pipeline's seed (then seed + 1, ...)")
    ap.add_argument("--show", type=int, default=5, help="how many disagreements to print")
    args = ap.parse_args()
    end = time.monotonic() + args.seconds
    pipelines = pairs = bad = 0
    shown = []
    seed = args.seed
    with tempfile.TemporaryDirectory() as tmp:
        while time.monotonic() < end:
            rng = random.Random(seed)
            case = random_case(rng)
            texts = with_added_forms(case, random_texts(rng))
            oracle, tok = build(case, Path(tmp) / str(seed))
            if tok is not None:
                found = disagreements(oracle, tok, texts)
                pipelines += 1
                pairs += len(texts)
                bad += len({text for _, _, text, _, _ in found})
                shown += [(seed, case, item) for item in found[: max(0, args.show - len(shown))]]
            seed += 1
    print(f"{pipelines} pipelines, {pairs} (pipeline, text) pairs tried, {bad} disagreed "
          f"(seeds {args.seed}..{seed - 1})")
    for seed_of, case, (route, way, text, got, want) in shown:
        print(f"seed {seed_of} {describe(case)}\n  {route} {way} {text!r}: {got} != tokenizers' {want}")


if __name__ == "__main__":
    main()
