"""Peak memory while streaming unique text without spaces through one general-path tokenizer.

    python benchmarks/bench_memo_memory.py                 # 200 MB through each tokenizer
    python benchmarks/bench_memo_memory.py --mb 20 --json  # what tests/hostile/test_memo_memory.py runs

Every line is new text (random Latin letters and CJK, 2,000 chars, no spaces), so every piece and
chunk misses the memos and is remembered: without a bound their memory would grow with the stream.
Each tokenizer (a Unigram with Metaspace and NFKC, a byte-level BPE with NFC; both trained here by
`tokenizers` on a few lines) runs in a fresh process, which prints its RSS once the tokenizer is
loaded and warm, its peak RSS after the stream, and the memos' documented bound
(tokkit/_native/vocab_tables.hpp, TokenMemo): the growth must stay under it plus the buffers of one
batch.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, random, sys, time
import tokkit
path, total_mb, batch_kb, threads = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]) or None
rng = random.Random(0)
letters = "abcdefghijklmnopqrstuvwxyz" + "".join(map(chr, range(0x4E00, 0x4E00 + 400)))
def lines(n_bytes):
    made = 0
    while made < n_bytes:
        line = "".join(rng.choices(letters, k=2000))
        made += len(line.encode())
        yield line
def rss_mb(field="VmRSS"):  # VmHWM, the peak, is this process's own (ru_maxrss keeps a forking parent's)
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith(field + ":")) / 1024
tok = tokkit.load(path)
for _ in range(3):  # warm: the scratch buffers of a batch exist before the baseline
    tok.encode_batch(list(lines(batch_kb * 1024)), num_threads=threads)
base = rss_mb()
t0 = time.perf_counter()
batch, size, done, ids = [], 0, 0, 0
for line in lines(total_mb * 2**20):
    batch.append(line); size += len(line.encode())
    if size >= batch_kb * 1024:
        ids += sum(len(x) for x in tok.encode_batch(batch, num_threads=threads)); done += size; batch, size = [], 0
if batch:
    ids += sum(len(x) for x in tok.encode_batch(batch, num_threads=threads)); done += size
print(json.dumps({"base_mb": base, "end_mb": rss_mb(),
                  "peak_mb": rss_mb("VmHWM"),
                  "mb": done / 2**20, "ids": ids, "seconds": time.perf_counter() - t0}))
"""

ROOT = Path(__file__).resolve().parents[1]  # this checkout: its tokkit is the one measured
LINES = ["".join(chr(0x4E00 + (i * 7 + k) % 400) for k in range(12)) + " ab cd ef gh" for i in range(300)]


def build(folder: Path) -> dict[str, Path]:
    """The two general-path tokenizers, trained by tokenizers on a few lines."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    uni = Tokenizer(models.Unigram())
    uni.normalizer = normalizers.NFKC()
    uni.pre_tokenizer = pre_tokenizers.Metaspace()
    uni.decoder = decoders.Metaspace()
    uni.train_from_iterator(LINES, trainers.UnigramTrainer(vocab_size=1000, special_tokens=["<unk>"],
                                                           unk_token="<unk>"))
    byte = Tokenizer(models.BPE())
    byte.normalizer = normalizers.NFC()
    byte.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    byte.decoder = decoders.ByteLevel()
    byte.train_from_iterator(LINES, trainers.BpeTrainer(vocab_size=1200,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    paths = {"unigram-metaspace": folder / "unigram.json", "bytelevel-nfc": folder / "bytelevel.json"}
    uni.save(str(paths["unigram-metaspace"]))
    byte.save(str(paths["bytelevel-nfc"]))
    return paths


def measure(path: Path, mb: float, batch_kb: int, threads: int = 0) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), str(mb), str(batch_kb), str(threads)],
                          capture_output=True, text=True, check=True, env=env)
    return json.loads(proc.stdout)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200.0, help="MB of text streamed through each tokenizer")
    parser.add_argument("--batch-kb", type=int, default=1024, help="KB of text per encode_batch call")
    parser.add_argument("--threads", type=int, default=0, help="encode_batch threads (0: all cores)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = {name: measure(path, args.mb, args.batch_kb, args.threads) for name, path in build(Path(tmp)).items()}
    if args.json:
        print(json.dumps(results))
        return
    print(f"{'tokenizer':<20} {'MB':>7} {'base RSS':>9} {'end RSS':>8} {'peak RSS':>9} {'MB/s':>6}")
    for name, r in results.items():
        print(f"{name:<20} {r['mb']:7.0f} {r['base_mb']:8.0f}M {r['end_mb']:7.0f}M {r['peak_mb']:8.0f}M "
              f"{r['mb'] / r['seconds']:6.2f}")


if __name__ == "__main__":
    main()
