"""`tokkit finetune`: train a classification, tagging or question-answering head on labelled files (needs torch)."""
from __future__ import annotations

import json

import click

from tokkit.cli.model_options import LAYERS, LENGTH, SEED, THREADS, WIDTH
from tokkit.cli.pretrain import _model_overrides
from tokkit.cli.task_options import field_options, fields_from
from tokkit.errors import TokkitError


@click.command("finetune")
@click.argument("train_file", metavar="TRAIN")
@click.option("-m", "--model", "model_dir", default=None, metavar="MODEL",
              help="A tokkit pretraining run, or a transformers BERT/ModernBERT folder.")
@click.option("--task", type=click.Choice(["classify", "regress", "tag", "qa"]), required=True,
              help="classify: a label per text (or text pair); regress: a number per text; tag: a label per "
                   "word; qa: an answer span in a context.")
@click.option("--eval", "eval_file", default=None, metavar="DEV",
              help="Labelled file scored after each epoch; the best model by it is kept.")
@click.option("-o", "--output", required=True, metavar="OUT",
              help="Folder: the best model as a transformers folder with its tokenizer, metrics.jsonl, "
                   "training_curve.png, summary.json, checkpoint/.")
@click.option("--from-scratch", is_flag=True,
              help="The same architecture from random init (MODEL's shape, or --arch and -t): the baseline.")
@click.option("-t", "--tokenizer", "tokenizer_dir", default=None, metavar="DIR",
              help="Tokenizer folder (default: MODEL's own).")
@click.option("--arch", type=click.Choice(["bert", "modernbert"]), default=None,
              help="With --from-scratch and no MODEL (default modernbert).")
@click.option("--layers", type=LAYERS, default=None, help="With --from-scratch and no MODEL: encoder layers.")
@click.option("--hidden", type=WIDTH, default=None, help="With --from-scratch and no MODEL: hidden size.")
@click.option("--heads", type=WIDTH, default=None, help="With --from-scratch and no MODEL: attention heads.")
@click.option("--ffn", type=WIDTH, default=None, help="With --from-scratch and no MODEL: feed-forward size.")
@click.option("--epochs", type=int, default=3, show_default=True)
@click.option("--max-time", type=float, default=None, metavar="SECONDS",
              help="Stop after this much training time (evaluation excluded), or after --epochs.")
@click.option("--lr", type=float, default=3e-4, show_default=True,
              help="Peak learning rate (3e-4 suits tokkit's small encoders; base-sized models want about 3e-5).")
@click.option("--batch-size", type=int, default=32, show_default=True)
@click.option("--train-limit", type=int, default=None, metavar="N",
              help="Train on N rows of TRAIN: a fixed sample that depends on N and TRAIN alone (not on --seed or "
                   "the model), so every arm and seed of a comparison trains on the same rows.")
@click.option("--max-length", type=LENGTH, default=None, metavar="N|auto",
              help="Tokens per row (default 128; qa 384); auto: the 99th percentile of TRAIN's rows, the template's "
                   "specials included, rounded up to a multiple of 8 and capped by the model's positions.")
@click.option("--stride", type=int, default=128, show_default=True, help="qa: tokens two context windows share.")
@click.option("--warmup", type=float, default=0.1, show_default=True, help="Warm-up share of the run.")
@click.option("--weight-decay", type=float, default=0.01, show_default=True)
@click.option("--clip", type=float, default=1.0, show_default=True, help="Gradient-norm clipping (0: off).")
@click.option("--layer-decay", type=float, default=1.0, show_default=True,
              help="Each layer below the head trains at this factor of the lr of the one above (1: off).")
@click.option("--freeze-embeddings", type=int, default=0, show_default=True, metavar="N",
              help="Keep the token and position embeddings at lr 0 for the first N steps, so a pretrained body's "
                   "word vectors survive the head's first, noisy gradients.")
@click.option("--pooling", type=click.Choice(["cls", "mean"]), default="cls", show_default=True,
              help="Sentence vector of classify/regress (mean: ModernBERT only).")
@click.option("--head-dropout", type=float, default=None, help="Dropout before the head (default: the model's).")
@click.option("--label-all-subtokens", is_flag=True, help="tag: train on every sub-token, not only each word's first.")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--eval-every-seconds", type=float, default=None, metavar="S",
              help="Also evaluate each time training time passes a multiple of S.")
@click.option("--checkpoint-every", type=int, default=0, show_default=True, metavar="N",
              help="Steps between resumable checkpoints (0: at each epoch's end).")
@click.option("--log-every", type=int, default=10, show_default=True, metavar="N")
@click.option("--threads", type=THREADS, default=None, metavar="N", help="torch threads (default: torch's choice).")
@click.option("--bf16/--no-bf16", default=None,
              help="bfloat16 autocast in the forward pass (default: on where it is fast).")
@click.option("--device", default=None, help="cpu, cuda, cuda:1 ... (default: cuda when available).")
@click.option("--resume", is_flag=True, help="Continue the run saved in OUT.")
@click.option("--force", is_flag=True,
              help="Replace OUT even if it holds an earlier run or other files (when the new run first keeps a "
                   "checkpoint or model; until then OUT is left as it was).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary.")
@click.option("--unseen-labels", type=click.Choice(["error", "wrong"]), default="error", show_default=True,
              help="A label of the evaluation file that the model was not trained on: an error, or a "
                   "prediction it cannot make, scored as wrong.")
@field_options
def command(train_file, model_dir, task, eval_file, output, from_scratch, tokenizer_dir, arch, layers, hidden, heads,
            ffn, unseen_labels, quiet, resume, force, **params):
    """Fine-tune MODEL (or the same model from scratch) on TRAIN, a JSONL, CSV or TSV file.

    Runs under torchrun too: `torchrun --nproc-per-node 2 -m tokkit.cli finetune ...`.
    """
    try:
        from tokkit.bert.finetune_run import FinetuneConfig, finetune
    except ImportError as exc:
        raise TokkitError(f"tokkit finetune needs torch and safetensors: pip install 'tokkit[bert]' ({exc})")

    fields = fields_from(params)
    cfg = FinetuneConfig(task=task, **params)
    summary = finetune(model_dir, train_file, output, config=cfg, eval_file=eval_file, tokenizer=tokenizer_dir,
                       from_scratch=from_scratch, arch=arch,
                       model_settings=_model_overrides(layers, hidden, heads, ffn, None, None), fields=fields,
                       unseen_labels=unseen_labels,
                       resume=resume, progress=None if not quiet else False, force=force)
    if not quiet:
        brief = {"task": summary["task"], "steps": summary["steps"], "epochs": round(summary["epochs"], 3),
                 "train_seconds": summary["train_seconds"], "best": summary["best_eval"]}
        click.echo(json.dumps(brief, indent=1))
