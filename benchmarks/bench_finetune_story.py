"""The whole story on 2 CPU threads: a vocabulary, ten minutes of pretraining, then fine-tuning on real
labelled text, beside the same model from random init with the same budget and seeds.

The protocol:
- vocabulary: `tokkit train --algo wordpiece --vocab-size 8000 --scoring frequency` on en/wiki/000-019;
- pretraining: the default `tokkit pretrain` for --pretrain-time seconds (600) on the same files,
  held-out text en/wiki/096.txt (or --pretrained RUN to reuse a run);
- sentence classification: `tokkit finetune --task classify` on rt-polarity (train, best model
  by dev accuracy) for at most --finetune-time seconds (300), once from the pretrained run and once
  `--from-scratch` (the same architecture and shape at random init), for each of --seeds; scored on
  test with `tokkit evaluate`; medians beside the majority class's share of test;
- word tagging: `tokkit finetune --task tag` on brown-pos for at most --tag-time seconds (600)
  from the pretrained run (and with --tag-scratch from scratch), scored per word on test (tags that
  train never saw count as errors), beside the most-frequent-tag-per-word baseline;
- fewer labels: --labels 500,2000,full runs the classification arms (and the baseline) on seeded
  samples of that many training rows (OUT/rt-polarity-N/train.jsonl; dev and test unchanged);
- the baseline a user would try first, beside every classification result: TF-IDF over word 1-2-grams
  and logistic regression, C picked on dev (scikit-learn, a `bench` dependency);
- transformers: with --transformers, its AutoModelForSequenceClassification fine-tunes the exported
  pretrained folder with the same settings (lr, warm-up and decay, weight decay on matrices, batch
  size, the same batches in the same order, as many steps as tokkit's seed-0 run took), scored on
  test; and the fine-tuned folder loads in transformers' Auto classes, whose predictions on test are
  compared with tokkit's.

Every run is its own process, one after another. Writes OUT/results.json and prints a Markdown table.

    python benchmarks/bench_finetune_story.py --out /tmp/story [--seeds 0,1,2] [--pretrained RUN]
        [--labels 500,2000,full] [--transformers] [--tag-scratch] [-- EXTRA FINETUNE OPTIONS]
    python benchmarks/bench_finetune_story.py --out /tmp/story --baseline-only --labels 500,2000,full
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
TOKKIT = [sys.executable, "-m", "tokkit"]


def run(cmd: list[str], log: Path) -> None:
    with open(log, "w", encoding="utf-8") as f:
        subprocess.run(cmd, check=True, stdout=f, stderr=subprocess.STDOUT)


def wiki(i: int) -> str:
    return str(SHARED / "corpus" / "en" / "wiki" / f"{i:03d}.txt")


def tokenizer(out: Path) -> Path:
    tok = out / "tok8k"
    if not (tok / "tokenizer.json").exists():
        run([*TOKKIT, "train", "--algo", "wordpiece", "--vocab-size", "8000", "--scoring", "frequency", "-q",
             "-o", str(tok), *[wiki(i) for i in range(20)]], out / "tok8k.log")
    return tok


def pretrained(out: Path, tok: Path, seconds: float, threads: int, extra: list[str]) -> Path:
    run_dir = out / "pretrain"
    if not (run_dir / "summary.json").exists():
        run([*TOKKIT, "pretrain", "-t", str(tok), "-o", str(run_dir), "--force", *[wiki(i) for i in range(20)],
             "--eval-file", wiki(96), "--max-time", str(seconds), "--threads", str(threads), "-q", *extra],
            out / "pretrain.log")
    return run_dir


def finetune(out: Path, name: str, task: str, files: Path, seconds: float, threads: int, seed: int,
             model: list[str], extra: list[str]) -> dict:
    """One `tokkit finetune` run (skipped when its folder holds a result), then `tokkit evaluate` on test."""
    folder = out / name
    scored = out / f"{name}.test.json"  # beside the model folder: a command never writes into its input
    if not scored.exists():
        t0 = time.time()
        run([*TOKKIT, "finetune", str(files / "train.jsonl"), "--task", task, "--eval", str(files / "dev.jsonl"),
             "-o", str(folder), "--max-time", str(seconds), "--threads", str(threads), "--seed", str(seed),
             "--unseen-labels", "wrong", "--force", "-q", *model, *extra], out / f"{name}.log")
        wall = time.time() - t0
        run([*TOKKIT, "evaluate", "-m", str(folder), str(files / "test.jsonl"), "--unseen-labels", "wrong",
             "--threads", str(threads), "-o", str(scored)], out / f"{name}.eval.log")
        summary = json.loads((folder / "summary.json").read_text())
        (folder / "wall.json").write_text(json.dumps({"wall_seconds": wall}))
    summary = json.loads((folder / "summary.json").read_text())
    test = json.loads(scored.read_text())
    key = {"classify": "accuracy", "tag": "token_accuracy"}[task]
    return {"name": name, "seed": seed, "test": test[key], "dev": (summary["best_eval"] or {}).get("metric_value"),
            "steps": summary["steps"], "train_seconds": summary["train_seconds"],
            "best_step": (summary["best_eval"] or {}).get("step"), "macro_f1": test.get("macro_f1")}


def task_files(out: Path, files: Path, labels: str, seed: int = 0) -> Path:
    """The task's folder, or with `labels` a number, a folder whose train.jsonl holds that many rows
    sampled with `seed` (dev and test are the task's own)."""
    if labels == "full":
        return files
    folder = out / f"{files.name}-{labels}"
    if not (folder / "train.jsonl").exists():
        rows = [r for r in (files / "train.jsonl").read_text(encoding="utf-8").split("\n") if r.strip()]
        folder.mkdir(parents=True, exist_ok=True)
        sample = random.Random(seed).sample(rows, min(int(labels), len(rows)))
        (folder / "train.jsonl").write_text("\n".join(sample) + "\n", encoding="utf-8")
        for split in ("dev.jsonl", "test.jsonl"):
            (folder / split).write_text((files / split).read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def tfidf_baseline(files: Path) -> dict:
    """TF-IDF over word 1-2-grams + logistic regression, C picked on dev: test accuracy and the C."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    def read(split):
        # split("\n"), not splitlines(): a review may hold U+2028 or U+0085 inside its JSON string
        rows = [json.loads(line) for line in (files / split).read_text(encoding="utf-8").split("\n") if line.strip()]
        return [r["text"] for r in rows], [r["label"] for r in rows]

    (xtr, ytr), (xdev, ydev), (xte, yte) = read("train.jsonl"), read("dev.jsonl"), read("test.jsonl")
    vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1)
    train = vec.fit_transform(xtr)
    fits = {c: LogisticRegression(C=c, max_iter=2000).fit(train, ytr) for c in (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128)}
    best = max(fits, key=lambda c: (fits[c].score(vec.transform(xdev), ydev), -c))
    return {"test": fits[best].score(vec.transform(xte), yte), "C": best}


def majority_share(path: Path) -> float:
    labels = [json.loads(line)["label"] for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
    return max(labels.count(x) for x in set(labels)) / len(labels)


def most_frequent_tag(files: Path) -> float:
    from tokkit.labelled import most_frequent_tag_baseline, read_examples

    result = most_frequent_tag_baseline(read_examples(files / "train.jsonl", "tag"),
                                        read_examples(files / "test.jsonl", "tag"))
    return result["token_accuracy"] if isinstance(result, dict) else float(result)


def median(runs: list[dict], key: str = "test") -> float:
    return statistics.median(r[key] for r in runs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--pretrain-time", type=float, default=600)
    ap.add_argument("--finetune-time", type=float, default=300)
    ap.add_argument("--tag-time", type=float, default=600)
    ap.add_argument("--pretrained", default=None, help="reuse this pretraining run")
    ap.add_argument("--pretrain-args", default="", help="extra `tokkit pretrain` options, space-separated")
    ap.add_argument("--skip-tag", action="store_true")
    ap.add_argument("--tag-scratch", action="store_true", help="also tag from random init")
    ap.add_argument("--transformers", action="store_true", help="also fine-tune with transformers")
    ap.add_argument("--labels", default="full", help="training-set sizes for classification, e.g. 500,2000,full")
    ap.add_argument("--baseline-only", action="store_true", help="only the TF-IDF baseline at each --labels")
    ap.add_argument("extra", nargs="*", help="extra `tokkit finetune` options (after --)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = [int(s) for s in args.seeds.split(",")]
    rt, brown = SHARED / "tasks" / "rt-polarity", SHARED / "tasks" / "brown-pos"
    sizes = args.labels.split(",")
    baselines = {n: tfidf_baseline(task_files(out, rt, n)) for n in sizes}
    if args.baseline_only:
        print("\n".join(f"| rt-polarity, {n} labels, TF-IDF + logistic regression (C={b['C']}) | {b['test']:.4f} |"
                        for n, b in baselines.items()))
        return 0
    pre = Path(args.pretrained) if args.pretrained else pretrained(out, tokenizer(out), args.pretrain_time,
                                                                   args.threads, args.pretrain_args.split())
    results: dict = {"pretrain": json.loads((pre / "summary.json").read_text()).get("final_eval"),
                     "majority": majority_share(rt / "test.jsonl"), "classify": {}, "tag": {},
                     "baseline": baselines}
    for n in sizes:
        files, tag = task_files(out, rt, n), "" if n == "full" else f"-{n}"
        for kind, model in (("pretrained", ["-m", str(pre)]), ("scratch", ["-m", str(pre), "--from-scratch"])):
            results["classify"][kind + tag] = [finetune(out, f"rt{tag}-{kind}-{s}", "classify", files,
                                                        args.finetune_time, args.threads, s, model, args.extra)
                                               for s in seeds]
    if not args.skip_tag:
        results["tag_floor"] = most_frequent_tag(brown)
        kinds = [("pretrained", ["-m", str(pre)])] + ([("scratch", ["-m", str(pre), "--from-scratch"])]
                                                      if args.tag_scratch else [])
        for kind, model in kinds:
            results["tag"][kind] = [finetune(out, f"brown-{kind}-0", "tag", brown, args.tag_time, args.threads, 0,
                                             model, args.extra)]
    if args.transformers:
        from story_transformers import transformers_check

        results["transformers"] = transformers_check(out, pre, rt, results["classify"]["pretrained"][0], args)
    (out / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True), encoding="utf-8")
    print(report(results))
    return 0


def report(results: dict) -> str:
    c = results["classify"]
    lines = ["| run | test (median) | each seed | steps in the budget |", "|---|---|---|---|"]
    for kind in c:
        runs = c[kind]
        each = ", ".join(f"{r['test']:.4f}" for r in runs)
        steps = ", ".join(str(r["steps"]) for r in runs)
        lines.append(f"| rt-polarity, {kind} | {median(runs):.4f} | {each} | {steps} |")
    for n, b in results.get("baseline", {}).items():
        lines.append(f"| rt-polarity, {n} labels, TF-IDF + logistic regression (C={b['C']}) | {b['test']:.4f} | | |")
    lines.append(f"| rt-polarity, majority class | {results['majority']:.4f} | | |")
    for kind, runs in results.get("tag", {}).items():
        lines.append(f"| brown-pos, {kind} | {median(runs):.4f} | | {runs[0]['steps']} |")
    if "tag_floor" in results:
        lines.append(f"| brown-pos, most frequent tag per word | {results['tag_floor']:.4f} | | |")
    if "transformers" in results:
        t = results["transformers"]
        lines.append(f"| rt-polarity, transformers on the exported pretrained folder | {t['test']:.4f} | | "
                     f"{t['steps']} |")
        lines.append(f"| tokkit's fine-tuned folder through AutoModelForSequenceClassification: same label | "
                     f"{t['agreement']:.4f} | | |")
    for kind in (k for k in c if k.startswith("pretrained")):
        scratch, size = c.get(kind.replace("pretrained", "scratch")), kind[len("pretrained-"):] or "full"
        if scratch:
            gain = median(c[kind]) - median(scratch)
            lines.append(f"\n{size} labels, pretrained - random init: {gain * 100:+.1f} points "
                         f"(median of {len(c[kind])} seeds)")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
