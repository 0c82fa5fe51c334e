"""The whole story on 2 CPU threads: a vocabulary, ten minutes of pretraining, then fine-tuning on real
labelled text, beside the same model from random init with the same budget and seeds.

The protocol:
- vocabulary: `tokkit train --algo wordpiece --vocab-size N --scoring frequency` (--vocab-size, 16000) on
  --vocab-on (wiki+task: en/wiki/000-019 and rt-polarity's training texts);
- pretraining: for each seed, `tokkit pretrain --seed S` for --pretrain-time seconds (600) on --pretrain-on
  (task: rt-polarity's train.jsonl, read for its texts, its labels never; wiki; film: the paragraphs of
  en/wiki/020-095 that name a film; joined by +), with --pretrain-args (--max-length auto: fitted to the
  task's rows); held-out text the task's dev texts, or en/wiki/096.txt for general text alone (or
  --pretrained RUN to reuse one run for every seed);
- sentence classification: `tokkit finetune --task classify` on rt-polarity (train, best model
  by dev accuracy) for at most --finetune-time seconds (300), once from seed S's run and once
  `--from-scratch` (the same architecture and shape at random init), with seed S, for each of --seeds;
  scored on test with `tokkit evaluate`; medians beside the majority class's share of test;
- word tagging: `tokkit finetune --task tag` on brown-pos for at most --tag-time seconds (600)
  from the first seed's run (and with --tag-scratch from scratch), scored per word on test (tags that
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

    python benchmarks/bench_finetune_story.py --out /tmp/story [--seeds 0,1,2] [--pretrain-on task]
        [--vocab-size 16000 --vocab-on wiki+task] [--pretrained RUN] [--labels 500,2000,full]
        [--transformers] [--tag-scratch] [-- EXTRA FINETUNE OPTIONS]
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


RT = SHARED / "tasks" / "rt-polarity"
FILM_WORDS = ("film", "movie", "cinema")


def film_paragraphs(out: Path) -> Path:
    """The paragraphs of en/wiki 020-095 that name a film, a movie or the cinema (each its own document):
    general text chosen for the task's subject, none of it in the vocabulary's files or the held-out 096."""
    path = out / "film-paragraphs.txt"
    if not path.exists():
        keep = [line for i in range(20, 96) for line in Path(wiki(i)).read_text(encoding="utf-8").split("\n")
                if len(line) > 200 and any(w in line.lower() for w in FILM_WORDS)]
        path.write_text("\n\n".join(keep) + "\n", encoding="utf-8")
    return path


def sources(out: Path, names: str) -> list[str]:
    """Corpus files by name: wiki (en/wiki 000-019), task (rt-polarity's train.jsonl, read for its texts),
    film (film_paragraphs), joined by +."""
    files = {"wiki": lambda: [wiki(i) for i in range(20)], "task": lambda: [str(RT / "train.jsonl")],
             "film": lambda: [str(film_paragraphs(out))]}
    return [f for name in names.split("+") for f in files[name]()]


def tokenizer(out: Path, size: int, on: str) -> Path:
    """The WordPiece vocabulary of `size` pieces trained on the `on` sources."""
    tok = out / f"tok{size // 1000}k-{on}"
    if not (tok / "tokenizer.json").exists():
        run([*TOKKIT, "train", "--algo", "wordpiece", "--vocab-size", str(size), "--scoring", "frequency", "-q",
             "-o", str(tok), *sources(out, on)], out / f"{tok.name}.log")
    return tok


def pretrained(out: Path, tok: Path, on: str, seconds: float, threads: int, seed: int, extra: list[str]) -> Path:
    """The pretraining run of `seed` on the `on` sources, held-out text the task's dev texts (a task) or
    en/wiki/096 (general text alone)."""
    run_dir = out / f"pretrain-{seed}"
    held_out = str(RT / "dev.jsonl") if "task" in on else wiki(96)
    if not (run_dir / "summary.json").exists():
        run([*TOKKIT, "pretrain", "-t", str(tok), "-o", str(run_dir), "--force", *sources(out, on),
             "--eval-file", held_out, "--max-time", str(seconds), "--threads", str(threads), "--seed", str(seed),
             "-q", *extra], out / f"pretrain-{seed}.log")
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
    args = options().parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = [int(s) for s in args.seeds.split(",")]
    sizes = args.labels.split(",")
    baselines = {n: tfidf_baseline(task_files(out, RT, n)) for n in sizes}
    if args.baseline_only:
        print("\n".join(f"| rt-polarity, {n} labels, TF-IDF + logistic regression (C={b['C']}) | {b['test']:.4f} |"
                        for n, b in baselines.items()))
        return 0
    tok = None if args.pretrained else tokenizer(out, args.vocab_size, args.vocab_on)
    runs = {s: Path(args.pretrained) if args.pretrained else
            pretrained(out, tok, args.pretrain_on, args.pretrain_time, args.threads, s, args.pretrain_args.split())
            for s in seeds}
    results: dict = {"pretrain": {s: pretrain_summary(r) for s, r in runs.items()},
                     "majority": majority_share(RT / "test.jsonl"), "classify": {}, "tag": {},
                     "baseline": baselines, "settings": vars(args)}
    for n in sizes:
        files, tag = task_files(out, RT, n), "" if n == "full" else f"-{n}"
        for kind, scratch in (("pretrained", []), ("scratch", ["--from-scratch"])):
            results["classify"][kind + tag] = [finetune(out, f"rt{tag}-{kind}-{s}", "classify", files,
                                                        args.finetune_time, args.threads, s,
                                                        ["-m", str(runs[s]), *scratch], args.extra) for s in seeds]
    if not args.skip_tag:
        tag_arms(results, out, runs[seeds[0]], args)
    if args.transformers:
        from story_transformers import transformers_check

        results["transformers"] = transformers_check(out, runs[seeds[0]], RT, results["classify"]["pretrained"][0],
                                                     args)
    (out / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True), encoding="utf-8")
    print(report(results))
    return 0


def options() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", default="0,1,2", help="each seed pretrains its own run and fine-tunes both arms")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--vocab-size", type=int, default=16000)
    ap.add_argument("--vocab-on", default="wiki+task", help="the vocabulary's sources (wiki, task, film, joined by +)")
    ap.add_argument("--pretrain-on", default="task", help="the pretraining sources (wiki, task, film, joined by +)")
    ap.add_argument("--pretrain-time", type=float, default=600)
    ap.add_argument("--finetune-time", type=float, default=300)
    ap.add_argument("--tag-time", type=float, default=600)
    ap.add_argument("--pretrained", default=None, help="reuse this pretraining run for every seed")
    ap.add_argument("--pretrain-args", default="--max-length auto",
                    help="extra `tokkit pretrain` options, space-separated")
    ap.add_argument("--skip-tag", action="store_true")
    ap.add_argument("--tag-scratch", action="store_true", help="also tag from random init")
    ap.add_argument("--transformers", action="store_true", help="also fine-tune with transformers")
    ap.add_argument("--labels", default="full", help="training-set sizes for classification, e.g. 500,2000,full")
    ap.add_argument("--baseline-only", action="store_true", help="only the TF-IDF baseline at each --labels")
    ap.add_argument("extra", nargs="*", help="extra `tokkit finetune` options (after --)")
    return ap


def pretrain_summary(run_dir: Path) -> dict:
    summary = json.loads((run_dir / "summary.json").read_text())
    return {"steps": summary["steps"], "train_seconds": summary["train_seconds"],
            "final_eval": summary.get("final_eval")}


def tag_arms(results: dict, out: Path, run_dir: Path, args) -> None:
    """brown-pos from the first seed's run (and from random init with --tag-scratch), beside the floor."""
    brown = SHARED / "tasks" / "brown-pos"
    results["tag_floor"] = most_frequent_tag(brown)
    kinds = [("pretrained", [])] + ([("scratch", ["--from-scratch"])] if args.tag_scratch else [])
    for kind, scratch in kinds:
        results["tag"][kind] = [finetune(out, f"brown-{kind}-0", "tag", brown, args.tag_time, args.threads, 0,
                                         ["-m", str(run_dir), *scratch], args.extra)]


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
    for seed, p in results.get("pretrain", {}).items():
        lines.append(f"\npretraining, seed {seed}: {p['steps']} steps in {p['train_seconds']:.0f} s")
    for kind in (k for k in c if k.startswith("pretrained")):
        scratch, size = c.get(kind.replace("pretrained", "scratch")), kind[len("pretrained-"):] or "full"
        if scratch:
            gain = median(c[kind]) - median(scratch)
            lines.append(f"\n{size} labels, pretrained - random init: {gain * 100:+.1f} points "
                         f"(median of {len(c[kind])} seeds)")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
