"""Page faults, CPU time, step time and RSS of `tokkit pretrain` steps under each glibc malloc setting.

Each setting (TOKKIT_MALLOC, see tokkit/bert/memory.py) runs in its own process: the default
`tokkit pretrain` protocol (ModernBERT defaults, batch 16 x 128, the 8k WordPiece vocabulary on
en/wiki/000-019, the held-out set of 1,000 blocks of 096.txt evaluated at the end) for --steps
steps on --threads threads. Per step, after --warmup steps: minor page faults, user and system CPU
seconds (taken around the optimizer step itself), and wall seconds (the run's training clock,
reading and masking included); RSS after the warm-up and at the end, and the process's peak
(ru_maxrss, which includes the final evaluation). Fault counts and CPU seconds hold on a busy
machine; step times need a quiet one.

    python benchmarks/bench_bert_malloc.py [--steps 60] [--threads 2]
        [--settings mmap4m bounded bounded+thp default heap mmap8m mmap=64M,trim=1G]
        [--tokenizer DIR] [--corpus-dir ../shared/corpus/en/wiki] [--out /tmp/bert-malloc]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE.parent.parent / "shared" / "corpus" / "en" / "wiki"
SETTINGS = ["mmap4m", "bounded", "default", "heap", "mmap8m"]


def environment(setting: str) -> dict:
    """The child's environment for a setting; a "+thp" suffix also sets PyTorch's
    THP_MEM_ALLOC_ENABLE (blocks of 2 MB and more aligned and madvised for transparent huge pages)."""
    malloc, thp = (setting[:-4], True) if setting.endswith("+thp") else (setting, False)
    return {**os.environ, "TOKKIT_MALLOC": malloc, **({"THP_MEM_ALLOC_ENABLE": "1"} if thp else {})}


def child(args) -> None:
    """One setting: run the steps with the optimizer step wrapped in rusage samples; print a JSON line."""
    import tokkit.bert.train as train
    from tokkit.bert import PretrainConfig, pretrain

    samples = []
    real = train.train_step

    def sampled(*a, **k):
        before = resource.getrusage(resource.RUSAGE_SELF)
        out = real(*a, **k)
        after = resource.getrusage(resource.RUSAGE_SELF)
        samples.append((after.ru_minflt - before.ru_minflt, after.ru_utime - before.ru_utime,
                        after.ru_stime - before.ru_stime, train.rss_mb()))
        return out

    train.train_step = sampled
    corpus = Path(args.corpus_dir)
    files = [str(corpus / f"{i:03d}.txt") for i in range(20)]
    run = Path(args.out) / args.child
    cfg = PretrainConfig(steps=args.steps, threads=args.threads, checkpoint_every=0, log_every=1,
                         eval_blocks=1000)
    summary = pretrain(args.tokenizer, files, run, config=cfg, eval_file=corpus / "096.txt", progress=False,
                       force=True)
    clock = [json.loads(ln)["train_seconds"] for ln in (run / "metrics.jsonl").read_text().splitlines()
             if json.loads(ln)["kind"] == "train"]
    kept = samples[args.warmup:]
    n = len(kept)
    print(json.dumps({
        "setting": args.child, "steps": summary["steps"],
        "faults_per_step": sum(s[0] for s in kept) / n, "user_s_per_step": sum(s[1] for s in kept) / n,
        "sys_s_per_step": sum(s[2] for s in kept) / n,
        "wall_s_per_step": (clock[-1] - clock[args.warmup - 1]) / (len(clock) - args.warmup),
        "rss_after_warmup_mb": kept[0][3], "rss_end_mb": kept[-1][3], "peak_rss_mb": train.peak_rss_mb()}))


def ensure_tokenizer(out: Path, corpus_dir: Path) -> Path:
    tok = out / "tok8k"
    if not (tok / "tokenizer.json").exists():
        files = [str(corpus_dir / f"{i:03d}.txt") for i in range(20)]
        subprocess.run([sys.executable, "-m", "tokkit", "train", "--algo", "wordpiece", "--vocab-size", "8000",
                        "--scoring", "frequency", "-q", "-o", str(tok), *files], check=True)
    return tok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10, help="steps left out of the per-step figures")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--settings", nargs="+", default=SETTINGS, metavar="SETTING",
                    help="TOKKIT_MALLOC values: presets (bounded, heap, mmap8m), 'default', or mmap=SIZE,trim=SIZE; "
                         "a '+thp' suffix adds THP_MEM_ALLOC_ENABLE=1")
    ap.add_argument("--tokenizer", default=None, help="default: OUT/tok8k, trained if absent")
    ap.add_argument("--corpus-dir", default=str(DEFAULT_CORPUS))
    ap.add_argument("--out", default="/tmp/bert-malloc")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tok = args.tokenizer or str(ensure_tokenizer(out, Path(args.corpus_dir)))
    rows = []
    for setting in args.settings:
        cmd = [sys.executable, __file__, "--child", setting, "--steps", str(args.steps), "--warmup", str(args.warmup),
               "--threads", str(args.threads), "--tokenizer", tok, "--corpus-dir", args.corpus_dir, "--out", args.out]
        t0 = time.time()
        res = subprocess.run(cmd, env=environment(setting), capture_output=True, text=True)
        if res.returncode:
            raise SystemExit(f"{setting}: failed\n{res.stderr[-3000:]}")
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
        print(f"{setting}: {time.time() - t0:.0f} s wall", file=sys.stderr, flush=True)
    (out / "results.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print("| TOKKIT_MALLOC | minor faults / step | sys CPU s / step | user CPU s / step | wall s / step | "
          "RSS after warm-up MB | RSS at end MB | peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['setting']} | {r['faults_per_step']:,.0f} | {r['sys_s_per_step']:.3f} | "
              f"{r['user_s_per_step']:.3f} | "
              f"{r['wall_s_per_step']:.3f} | {r['rss_after_warmup_mb']:.0f} | {r['rss_end_mb']:.0f} | "
              f"{r['peak_rss_mb']:.0f} |")


if __name__ == "__main__":
    main()
