"""Encode speed: tokkit against tiktoken and tokenizers on 10 MB of ../shared/corpus/en/wiki.

Median of --repeat rounds after one warm-up round, the contenders alternating within each round;
MB/s = UTF-8 input bytes / wall time. The 32k
vocabularies are trained once by `tokenizers` (or by tokkit with --trainer tokkit) on the same
10 MB slice and cached in --cache.

    python benchmarks/bench_encode.py [--repeat 5] [--only bytelevel,wordpiece,pairs,threads]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tokkit.bench import encode_tasks as tasks
from tokkit.bench.contenders import require, skip_note
from tokkit.bench.timing import medians, time_calls

os.environ.setdefault("RAYON_NUM_THREADS", "2")  # tokenizers' thread pool: 2 threads, like tokkit

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "en" / "wiki"
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def read_slice(limit: int) -> str:
    parts, size = [], 0
    for path in sorted(CORPUS.glob("*.txt")):
        data = path.read_bytes()[: limit - size]
        text = data.decode("utf-8", "ignore")
        parts.append(text)
        size += len(text.encode())
        if size >= limit:
            break
    return "".join(parts)


def train_vocabs(text: str, cache: Path, trainer: str) -> dict[str, Path]:
    out = {"bytelevel": cache / f"{trainer}-bytelevel-32k", "wordpiece": cache / f"{trainer}-wordpiece-32k"}
    if all((p / "tokenizer.json").is_file() for p in out.values()):
        return out
    lines = text.split("\n")
    if trainer == "tokkit":
        import tokkit

        for algo, path in out.items():
            tokkit.train(texts=lines, algo=algo, vocab_size=32000).save(path)
        return out
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    def template(tok):
        ids = [(t, tok.token_to_id(t)) for t in ("[CLS]", "[SEP]")]
        tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                                           pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=ids)

    wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.decoder = decoders.WordPiece()
    wp.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=32000, special_tokens=SPECIALS))
    template(wp)
    bl = Tokenizer(models.BPE())
    bl.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bl.decoder = decoders.ByteLevel()
    bl.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=32000, special_tokens=SPECIALS[:1] + SPECIALS[2:],
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    template(bl)
    for tok, path in ((bl, out["bytelevel"]), (wp, out["wordpiece"])):
        path.mkdir(parents=True, exist_ok=True)
        tok.save(str(path / "tokenizer.json"))
    return out


def parallel_control(repeat: int) -> float:
    """Speed-up of hashlib's GIL-free sha256 on 2 threads over 1: the machine's spare parallelism."""
    import hashlib
    import threading

    blocks = [bytes(50_000_000)] * 4

    def run(threads):
        def work(part):
            for block in part:
                hashlib.sha256(block).digest()

        pool = [threading.Thread(target=work, args=(blocks[k::threads],)) for k in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()

    t = timed({1: lambda: run(1), 2: lambda: run(2)}, repeat)
    return t[1] / t[2]


def timed(fns: dict, repeat: int) -> dict:
    """Median wall time of each callable over `repeat` alternating rounds, after one warm-up round."""
    return medians(time_calls(fns, rounds=repeat))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--mb", type=float, default=10.0, help="corpus slice in MB")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/tokkit-bench"))
    ap.add_argument("--trainer", choices=["tokenizers", "tokkit"], default="tokenizers")
    ap.add_argument("--only", default="bytelevel,wordpiece,pairs,threads")
    args = ap.parse_args(argv)
    if not CORPUS.is_dir():
        sys.exit(f"corpus not found: {CORPUS}")
    require("tokenizers")  # the reference of every comparison (and the default trainer)
    text = read_slice(int(args.mb * 1e6))
    slice_path = Path(args.cache) / f"encode-slice-{args.mb:g}MB.txt"
    slice_path.parent.mkdir(parents=True, exist_ok=True)
    slice_path.write_text(text, encoding="utf-8")
    mb, lines = len(text.encode()) / 1e6, tasks.lines_of(text)
    paths = {k: str(v) for k, v in train_vocabs(text, Path(args.cache), args.trainer).items()}
    del text
    only, at = set(args.only.split(",")), str(slice_path)
    print(f"corpus: {mb:.1f} MB, {len(lines)} lines; vocabularies by {args.trainer}; median of {args.repeat}")

    def report(name, ours, theirs, target, anchor):
        print(f"{name:<34} tokkit {mb / ours:7.2f} MB/s   {anchor:<22} {mb / theirs:7.2f} MB/s   "
              f"ratio {theirs / ours:5.2f}x (target {target}x)", flush=True)

    bl, wp = paths["bytelevel"], paths["wordpiece"]
    if "bytelevel" in only and not skip("tiktoken"):
        t = timed({"tokkit": tasks.tokkit_encode(bl, at, "whole"), "tiktoken": tasks.tiktoken_encode(bl, at)},
                  args.repeat)
        report("bytelevel encode(10 MB str), 1 thr", t["tokkit"], t["tiktoken"], 1.0, "tiktoken r50k")
    if "wordpiece" in only or "threads" in only:
        fns = {"two": tasks.tokkit_encode(wp, at, "lines", threads=2)}
        if "wordpiece" in only:
            fns["tokenizers"] = tasks.tokenizers_encode(wp, at, "lines")
        if "threads" in only:
            fns["one"] = tasks.tokkit_encode(wp, at, "lines", threads=1)
        t = timed(fns, args.repeat)
        if "wordpiece" in only:
            report("wordpiece encode_batch, 2 thr", t["two"], t["tokenizers"], 5.0, "tokenizers")
        if "threads" in only:
            report("wordpiece encode_batch 2 vs 1 thr", t["two"], t["one"], 1.6, "tokkit 1 thread")
            control = parallel_control(args.repeat)
            print(f"{'  control: sha256 2 vs 1 thr':<34} {control:5.2f}x  (what this machine gives two "
                  "GIL-free threads right now)", flush=True)
    if "pairs" in only:
        t = timed({"tokkit": tasks.tokkit_pairs(wp, at, threads=2), "tokenizers": tasks.tokenizers_pairs(wp, at)},
                  args.repeat)
        report("pairs -> padded numpy, 2 thr", t["tokkit"], t["tokenizers"], 3.0, "tokenizers + numpy")


def skip(need: str) -> bool:
    """Say in one line that a contender is not installed; True when it is not."""
    note = skip_note(need)
    if note:
        print(f"{need}: {note}", flush=True)
    return bool(note)


if __name__ == "__main__":
    main()
