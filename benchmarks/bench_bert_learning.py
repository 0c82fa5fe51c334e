"""How much a small encoder learns in 600 s of CPU training: the default `tokkit pretrain` against
transformers' ModernBertForMaskedLM on the same vocabulary, batches and clock.

The protocol:
- vocabulary: `tokkit train --algo wordpiece --vocab-size 8000 --scoring frequency` on
  en/wiki/000-019 (read in place);
- training: the default `tokkit pretrain` (ModernBERT, lr 2e-3, masking 30% falling to 15%, the
  shuffled stream: documents in a seeded order, examples through the shuffle buffer) for
  --max-time seconds of training (evaluation excluded) on --threads threads, evaluated every
  --max-time / 4;
- transformers' ModernBertForMaskedLM (4 layers x 256, GeGLU width 384, sparse prediction, SDPA)
  trains in the same loop tokkit uses, on the same shuffled batches of the default size x 128 (the same seed,
  hence the same examples in the same order) at a constant 15% masking, with AdamW and tokkit's
  schedule (warm-up over the first 5% of the time, then linear decay to zero at the time limit),
  bf16 autocast where tokkit would use it, at each of --hf-lrs (the best is reported);
- evaluation: 1,000 blocks of 128 tokens from en/wiki/096.txt in file order, masked once (seed
  1234, 15%, 80/10/10); [MASK] ratio = accuracy at [MASK] positions / accuracy of always
  predicting the held-out text's most frequent token; held-out MLM loss over all labelled positions.

Levers, one per run, each a tokkit run with one option changed (--only picks them):
tokkit-modernbert-batch32 (batch 32 instead of the default 16), -lr2e-3 (instead of 1e-3; -lr1e-3 is
the default's rate, kept to repeat the run that chose it), -mask15 (15% throughout instead of 30% ->
15%), -warmup-steps (warm-up over 100 steps instead of the first 5% of the training time; the
decay is counted in time either way; -warmup-time names the default explicitly), -malloc-heap
(TOKKIT_MALLOC=heap: few page faults, more memory), -malloc-4m (TOKKIT_MALLOC=mmap=4M,trim=64M, the
default's setting named), -no-shuffle (the files in order, as before shuffling). The faithful BERT
runs are there too: tokkit-bert and hf-bert-5e-4.

Every run is its own process (threads, memory and RSS apart), one after another. Writes
OUT/results.json, OUT/learning.png (held-out loss and ratio against training seconds, all runs)
and prints a Markdown table: held-out loss and [MASK] ratio at each quarter, steps, seconds per
step and peak RSS.

    python benchmarks/bench_bert_learning.py --out /tmp/bert-bar [--max-time 600] [--threads 2]
        [--only tokkit-modernbert,hf-modernbert-0.002,...] [--corpus-dir ../shared/corpus/en/wiki]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE.parent.parent / "shared" / "corpus" / "en" / "wiki"
EVAL_SEED = 1234


def train_files(corpus_dir: Path) -> list[str]:
    return [str(corpus_dir / f"{i:03d}.txt") for i in range(20)]


TOKKIT = [sys.executable, "-m", "tokkit"]  # the tokkit this interpreter imports (a checkout on PYTHONPATH)


def ensure_tokenizer(out: Path, corpus_dir: Path) -> Path:
    tok = out / "tok8k"
    if not (tok / "tokenizer.json").exists():
        subprocess.run([*TOKKIT, "train", "--algo", "wordpiece", "--vocab-size", "8000", "--scoring", "frequency",
                        "-q", "-o", str(tok), *train_files(corpus_dir)], check=True)
    return tok


def contenders(hf_lrs: list[float], hf_bert_lr: float, seconds: float) -> dict[str, dict]:
    """Every run this script knows, by name; DEFAULT_RUNS are run unless --only says otherwise."""
    runs = {"tokkit-modernbert": {"kind": "tokkit", "args": []}}
    for lr in hf_lrs:
        runs[f"hf-modernbert-{lr:g}"] = {"kind": "hf", "arch": "modernbert", "lr": lr}
    levers = {"batch32": ["--batch-size", "32"], "batch16": ["--batch-size", "16"], "lr1e-3": ["--lr", "1e-3"],
              "lr2e-3": ["--lr", "2e-3"], "mask15": ["--mlm-probability", "0.15"],
              "warmup-time": ["--warmup-seconds", f"{0.05 * seconds:g}"], "warmup-steps": ["--warmup-steps", "100"],
              "no-shuffle": ["--no-shuffle"]}
    for name, args in levers.items():
        runs[f"tokkit-modernbert-{name}"] = {"kind": "tokkit", "args": args}
    runs["tokkit-modernbert-malloc-heap"] = {"kind": "tokkit", "args": [], "env": {"TOKKIT_MALLOC": "heap"}}
    runs["tokkit-modernbert-malloc-4m"] = {"kind": "tokkit", "args": [], "env": {"TOKKIT_MALLOC": "mmap=4M,trim=64M"}}
    runs["tokkit-bert"] = {"kind": "tokkit", "args": ["--arch", "bert"]}
    runs[f"hf-bert-{hf_bert_lr:g}"] = {"kind": "hf", "arch": "bert", "lr": hf_bert_lr}
    return runs


def default_runs(runs: dict) -> list[str]:
    return ["tokkit-modernbert"] + [n for n in runs if n.startswith("hf-modernbert-")]


def run_tokkit(name: str, spec: dict, tok: Path, out: Path, corpus_dir: Path, args) -> Path:
    run = out / "runs" / name
    cmd = [*TOKKIT, "pretrain", "-t", str(tok), "-o", str(run), *train_files(corpus_dir),
           "--eval-file", str(corpus_dir / "096.txt"), "--eval-blocks", str(args.eval_blocks),
           "--eval-every-seconds", str(args.seconds / 4), "--max-time", str(args.seconds),
           "--threads", str(args.threads), "--checkpoint-every", "0", "--force", *spec["args"]]
    print("$", " ".join(cmd), flush=True)
    env = {**os.environ, **spec.get("env", {})}
    subprocess.run(cmd, check=True, env=env)
    return run


def run_hf(name: str, spec: dict, tok: Path, out: Path, corpus_dir: Path, args) -> Path:
    run = out / "runs" / name
    cmd = [sys.executable, __file__, "--hf-worker", spec["arch"], "--lr", str(spec["lr"]), "--run", str(run),
           "--tokenizer", str(tok), "--corpus-dir", str(corpus_dir), "--seconds", str(args.seconds),
           "--eval-blocks", str(args.eval_blocks),
           "--threads", str(args.threads)]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    return run


# ---------------------------------------------------------------- transformers' models, tokkit's loop

def hf_worker(args) -> None:
    """Train one transformers model for args.seconds in tokkit's loop; write metrics.jsonl + summary.json."""
    import torch
    import transformers

    import tokkit
    from tokkit.bert import data
    from tokkit.bert.ddp import make_optimizer, train_step
    from tokkit.bert.evaluate import evaluate, most_frequent_token
    from tokkit.bert.memory import return_freed_memory
    from tokkit.bert.model import PreTrainingOutput
    from tokkit.bert.train import PretrainConfig, fast_bf16, peak_rss_mb, rss_mb

    return_freed_memory()  # the same allocator settings as tokkit's own runs
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    tok = tokkit.load(str(args.tokenizer))
    specials = data.check_tokenizer(tok)
    V = tok.vocab_size
    if args.hf_worker == "modernbert":
        hf = transformers.ModernBertForMaskedLM(transformers.ModernBertConfig(
            vocab_size=V, hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=384,
            max_position_embeddings=512, pad_token_id=specials["[PAD]"] or 0, cls_token_id=specials["[CLS]"],
            sep_token_id=specials["[SEP]"], bos_token_id=specials["[CLS]"], eos_token_id=specials["[SEP]"],
            sparse_prediction=True, attn_implementation="sdpa"))
    else:
        hf = transformers.BertForMaskedLM(transformers.BertConfig(
            vocab_size=V, hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024,
            pad_token_id=specials["[PAD]"] or 0, attn_implementation="sdpa"))

    class Adapter(torch.nn.Module):
        """transformers' model behind tokkit's model interface (logits at labelled positions, summed loss)."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None, next_sentence_label=None):
            sel = labels != -100
            if args.hf_worker == "modernbert":  # sparse prediction: logits only where labels are
                logits = self.inner(input_ids=input_ids, attention_mask=attention_mask, labels=labels).logits
            else:
                logits = self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                    token_type_ids=token_type_ids).logits[sel]
            target = labels[sel]
            total = torch.nn.functional.cross_entropy(logits.float(), target, reduction="sum")
            count = sel.sum()
            return PreTrainingOutput(total / count.clamp(min=1), logits, None, total, count, None, None)

    model = Adapter(hf)
    cfg = PretrainConfig(arch=args.hf_worker, lr=args.lr, max_time=args.seconds, mlm_probability=0.15)
    bf16 = fast_bf16(torch.device("cpu"))
    opt = make_optimizer(model, cfg.lr, cfg.weight_decay)
    files = train_files(Path(args.corpus_dir))
    dataset = data.make_dataset(tok, files, kind="full", max_length=128, seed=0)
    stream = data.BatchStream(dataset, data.make_collator(tok, seed=0, mlm_probability=0.15), cfg.batch_size)
    evalset = data.eval_batches(tok, Path(args.corpus_dir) / "096.txt", blocks=args.eval_blocks, max_length=128,
                                batch_size=64, seed=EVAL_SEED)
    baseline = most_frequent_token(evalset, [i for i in specials.values() if i is not None])
    run = Path(args.run)
    run.mkdir(parents=True, exist_ok=True)
    metrics = open(run / "metrics.jsonl", "w", encoding="utf-8")
    every = args.seconds / 4
    next_eval, train_time, step, last = every, 0.0, 0, {}

    def do_eval():
        res = evaluate(model, evalset, mask_token_id=specials["[MASK]"], baseline_id=baseline)
        rec = {"kind": "eval", "step": step, "train_seconds": round(train_time, 2), "rss_mb": rss_mb(), **res}
        metrics.write(json.dumps(rec) + "\n")
        metrics.flush()
        print(f"step {step}  {train_time:.0f} s  held-out loss {res['mlm_loss']:.3f}  "
              f"[MASK] ratio {res['mask_acc_ratio']:.2f}", file=sys.stderr, flush=True)
        return rec

    model.train()
    ev = None
    while train_time < args.seconds:
        t0 = time.perf_counter()
        batch = next(stream)
        batch.pop("next_sentence_label", None)
        for g in opt.param_groups:
            g["lr"] = lr = cfg.lr_at(step, train_time)
        last = train_step(model, opt, batch, clip=cfg.clip, bf16=bf16)
        train_time += time.perf_counter() - t0
        step += 1
        if step % 10 == 0:
            metrics.write(json.dumps({"kind": "train", "step": step, "lr": lr, "train_seconds": round(train_time, 3),
                                      "rss_mb": rss_mb(), **last}) + "\n")
        if train_time >= next_eval and train_time < args.seconds:
            next_eval = (int(train_time // every) + 1) * every
            ev = do_eval()
    ev = do_eval()
    metrics.close()
    summary = {"arch": "hf-" + args.hf_worker, "steps": step, "train_seconds": round(train_time, 2),
               "final_eval": ev, "final_train": last, "peak_rss_mb": peak_rss_mb(), "lr": args.lr, "bf16": bf16}
    (run / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")


# ---------------------------------------------------------------- report

def read_run(run: Path) -> dict:
    evals = [json.loads(ln) for ln in (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
             if ln.strip() and json.loads(ln).get("kind") == "eval"]
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    train = [json.loads(ln) for ln in (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
             if ln.strip() and json.loads(ln).get("kind") == "train"]
    rss = [r["rss_mb"] for r in train + evals if r.get("rss_mb")]
    return {"evals": evals, "steps": summary["steps"], "train_seconds": summary["train_seconds"],
            "seconds_per_step": summary["train_seconds"] / max(1, summary["steps"]),
            "peak_rss_mb": summary.get("peak_rss_mb"), "rss_first_mb": rss[0] if rss else None,
            "rss_last_mb": rss[-1] if rss else None, "rss_max_sampled_mb": max(rss) if rss else None}


def chart(results: dict, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for i, (name, r) in enumerate(sorted(results.items())):
        t = [e["train_seconds"] for e in r["evals"]]
        style = dict(marker="o", lw=1.2, color=f"C{i}", ls="-" if name.startswith("tokkit") else "--")
        ax1.plot(t, [e["mlm_loss"] for e in r["evals"]], label=name, **style)
        ax2.plot(t, [e["mask_acc_ratio"] for e in r["evals"]], label=name, **style)
    ax2.axhline(5.0, color="green", lw=0.8, ls=":", label="target ratio 5.0")
    ax2.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax1.set(xlabel="training seconds (evaluation excluded)", ylabel="held-out MLM loss",
            title="held-out MLM loss (1,000 blocks of wiki/096)")
    ax2.set(xlabel="training seconds (evaluation excluded)", ylabel="[MASK] acc / most-frequent-token acc",
            title="[MASK] ratio")
    ax1.legend(fontsize=8)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def table(results: dict, seconds: float) -> str:
    marks = [seconds * k / 4 for k in (1, 2, 3, 4)]
    head = ("| run | steps | s / step | " + " | ".join(f"~{m:.0f} s: ratio / loss" for m in marks)
            + " | peak RSS MB |")
    lines = [head, "|" + "---|" * (len(marks) + 4)]
    for name, r in results.items():
        cells = []
        for m in marks:
            # the evaluation at (or just past) each mark: the first whose training time reached it
            hit = [e for e in r["evals"] if e["train_seconds"] >= m - 1.0]
            e = hit[0] if hit else None
            cells.append(f"{e['mask_acc_ratio']:.2f} / {e['mlm_loss']:.3f} ({e['train_seconds']:.0f} s)" if e else "-")
        peak = f"{r['peak_rss_mb']:.0f}" if r.get("peak_rss_mb") else "-"
        lines.append(f"| {name} | {r['steps']} | {r['seconds_per_step']:.3f} | " + " | ".join(cells) + f" | {peak} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/bert-bar")
    ap.add_argument("--corpus-dir", default=str(DEFAULT_CORPUS))
    ap.add_argument("--max-time", "--seconds", dest="seconds", type=float, default=600.0,
                    help="seconds of training per run (evaluation excluded)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-blocks", type=int, default=1000, help="held-out blocks (fewer for a smoke run)")
    ap.add_argument("--hf-lrs", default="1e-3,2e-3", help="learning rates tried for transformers' ModernBERT")
    ap.add_argument("--hf-bert-lr", type=float, default=5e-4)
    ap.add_argument("--only", default=None,
                    help="comma-separated run names (default: tokkit-modernbert and hf-modernbert at each --hf-lrs)")
    ap.add_argument("--report-only", action="store_true", help="only redraw the chart and table from OUT/runs")
    ap.add_argument("--hf-worker", choices=["modernbert", "bert"], help=argparse.SUPPRESS)
    ap.add_argument("--lr", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--tokenizer", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.hf_worker:
        return hf_worker(args)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    corpus_dir = Path(args.corpus_dir)
    runs = contenders([float(x) for x in args.hf_lrs.split(",")], args.hf_bert_lr, args.seconds)
    chosen = args.only.split(",") if args.only else default_runs(runs)
    unknown = [n for n in chosen if n not in runs]
    if unknown:
        raise SystemExit(f"unknown run(s) {unknown}; known: {sorted(runs)}")
    if not args.report_only:
        tok = ensure_tokenizer(out, corpus_dir)
        for name in chosen:
            spec = runs[name]
            t0 = time.time()
            (run_tokkit if spec["kind"] == "tokkit" else run_hf)(name, spec, tok, out, corpus_dir, args)
            print(f"{name}: done in {time.time() - t0:.0f} s wall", flush=True)
    results = {name: read_run(out / "runs" / name) for name in runs if (out / "runs" / name / "summary.json").exists()}
    (out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    chart(results, out / "learning.png")
    print(table(results, args.seconds))
    print(f"chart: {out / 'learning.png'}")


if __name__ == "__main__":
    main()
