"""Draw docs/pretraining-levers.png from benchmarks/results/pretraining_levers.json.

Each lever is one pretraining run (one change from the default, 600 s on en/wiki 000-019) followed
by `tokkit finetune` on rt-polarity from that run and from random init of the same shape; the
chart puts each run's test accuracy beside its random-init twin, with the majority class and the
+5 point line the recipe aims at.

    python benchmarks/plot_pretraining_levers.py [--data FILE] [--out PNG]
    python benchmarks/plot_pretraining_levers.py --data benchmarks/results/pretraining_task_text.json \
        --out docs/pretraining-task-text.png    # the runs on the task's own text (with the TF-IDF line)
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

HERE = Path(__file__).resolve().parent


def draw(data: dict, out: Path) -> None:
    """One pair of bars per lever: fine-tuned from the run, and from random init."""
    levers = data["levers"]
    names = [lever["name"] for lever in levers]
    xs = range(len(levers))
    fig, ax = plt.subplots(figsize=(9, 4.2))
    ax.bar([x - 0.2 for x in xs], [lever["pretrained"] * 100 for lever in levers], 0.4, label="from the run")
    ax.bar([x + 0.2 for x in xs], [lever["scratch"] * 100 for lever in levers], 0.4, label="random init")
    ax.axhline(data["majority"] * 100, color="grey", ls=":", label="majority class")
    ax.axhline(data["baseline_scratch"] * 100 + 5, color="red", ls="--", label="random init + 5 points")
    if "tfidf" in data:
        ax.axhline(data["tfidf"] * 100, color="green", ls="-.", label="TF-IDF + logistic regression")
    ax.set_xticks(list(xs), names, rotation=20, ha="right", fontsize=8)
    ax.set_ylim(data["majority"] * 100 - 3, data["baseline_scratch"] * 100 + 8)
    ax.set_ylabel("rt-polarity test accuracy, %")
    ax.set_title(data.get("title", "One lever per pretraining run, fine-tuned on rt-polarity"))
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=110, metadata={"Software": None})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(HERE / "results" / "pretraining_levers.json"))
    ap.add_argument("--out", default=str(HERE.parent / "docs" / "pretraining-levers.png"))
    args = ap.parse_args()
    draw(json.loads(Path(args.data).read_text(encoding="utf-8")), Path(args.out))


if __name__ == "__main__":
    main()
