"""`tokkit pretrain`: pretrain a small BERT on a corpus with a tokkit tokenizer (needs torch)."""
from __future__ import annotations

import json

import click

from tokkit.cli.model_options import LAYERS, LENGTH, SEED, THREADS, WIDTH
from tokkit.errors import TokkitError
from tokkit.labelled import Fields


def _model_overrides(layers, hidden, heads, ffn, positions, dropout):
    """The model options given on the command line, checked here so a bad value is one error line."""
    for name, value in (("--layers", layers), ("--hidden", hidden), ("--heads", heads), ("--ffn", ffn),
                        ("--positions", positions)):
        if value is not None and value < 1:
            raise TokkitError(f"{name} must be at least 1, got {value}")
    if (hidden or 256) % (heads or 4):
        raise TokkitError(f"--hidden {hidden or 256} must be a multiple of --heads {heads or 4}")
    if dropout is not None and not 0 <= dropout < 1:
        raise TokkitError(f"--dropout must be in [0, 1), got {dropout}")
    out = {}
    for key, value in (("num_layers", layers), ("hidden_size", hidden), ("num_heads", heads),
                       ("intermediate_size", ffn), ("max_position_embeddings", positions)):
        if value is not None:
            out[key] = value
    if dropout is not None:
        out.update(dropout=dropout, attention_dropout=dropout)
    return out


@click.command("pretrain")
@click.argument("corpus", nargs=-1, required=True, metavar="CORPUS...")
@click.option("-t", "--tokenizer", "tokenizer_dir", required=True, metavar="DIR", help="Tokenizer folder.")
@click.option("-o", "--output", required=True, metavar="RUN_DIR",
              help="Run folder: model/ (for transformers), checkpoint/, metrics.jsonl, loss_curve.png, summary.json.")
@click.option("--objective", type=click.Choice(["mlm", "mlm+nsp", "electra"]), default="mlm", show_default=True,
              help="mlm trains on full-sentence examples, mlm+nsp on sentence pairs; electra trains the encoder "
                   "to spot the tokens a small generator replaced, at every position (RUN/model/ then holds the "
                   "encoder alone).")
@click.option("--generator-layers", type=LAYERS, default=1, show_default=True,
              help="electra: the generator's layers (the encoder's width and embeddings).")
@click.option("--arch", type=click.Choice(["bert", "modernbert"]), default=None,
              help="Default: modernbert for mlm from scratch; bert for mlm+nsp; the --init/--resume model's own.")
@click.option("--steps", type=int, default=None, metavar="N",
              help="Default: 1000, or no step limit with --max-time.")
@click.option("--batch-size", type=int, default=16, show_default=True, metavar="N")
@click.option("--max-length", type=LENGTH, default=128, show_default=True, metavar="N|auto",
              help="Tokens per example; auto (labelled files): the 99th percentile of their rows with [CLS] and "
                   "[SEP], rounded up to a multiple of 8 and capped by the model's positions.")
@click.option("--lr", type=float, default=None, metavar="LR",
              help="Peak learning rate (default: 1e-3 for modernbert, 5e-4 for bert).")
@click.option("--warmup-steps", type=int, default=None, metavar="N",
              help="Default: 5% of --steps (with --max-time and no --steps, 5% of the time: --warmup-seconds).")
@click.option("--warmup-seconds", type=float, default=None, metavar="S",
              help="Count the warm-up in training seconds instead of steps (default with --max-time and no "
                   "--steps: 5% of --max-time).")
@click.option("--weight-decay", type=float, default=0.01, show_default=True)
@click.option("--clip", type=float, default=1.0, show_default=True, help="Gradient-norm clipping (0: off).")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--mlm-probability", type=float, default=None, metavar="P",
              help="Masking rate (default: 0.30 falling to 0.15 for modernbert, 0.15 for bert).")
@click.option("--mlm-probability-end", type=float, default=None, metavar="P",
              help="Masking rate at the end of the run, linear from --mlm-probability.")
@click.option("--whole-word-masking", is_flag=True,
              help="Choose whole words to mask (every sub-token of a chosen word), not single tokens.")
@click.option("--eval-file", default=None, metavar="FILE", help="Held-out text for periodic evaluation.")
@click.option("--eval-every", type=int, default=0, show_default=True, metavar="N", help="0: only at the end.")
@click.option("--eval-every-seconds", type=float, default=None, metavar="S",
              help="Also evaluate each time training time passes a multiple of S seconds.")
@click.option("--eval-blocks", type=int, default=256, show_default=True, metavar="N")
@click.option("--checkpoint-every", type=int, default=500, show_default=True, metavar="N")
@click.option("--log-every", type=int, default=10, show_default=True, metavar="N")
@click.option("--max-time", type=float, default=None, metavar="SECONDS",
              help="Stop after this much training time (evaluation excluded).")
@click.option("--resume", default=None, metavar="DIR", help="Continue the run saved in DIR exactly.")
@click.option("--init", "init_dir", default=None, metavar="DIR",
              help="Start from a model: a tokkit run (continued pretraining, e.g. on a task's own text) or a "
                   "Hugging Face BERT or ModernBERT folder.")
@click.option("--layers", type=LAYERS, default=None, help="Model: encoder layers (default 4).")
@click.option("--hidden", type=WIDTH, default=None, help="Model: hidden size (default 256).")
@click.option("--heads", type=WIDTH, default=None, help="Model: attention heads (default 4).")
@click.option("--ffn", type=WIDTH, default=None, help="Model: feed-forward size (default 1024).")
@click.option("--positions", type=WIDTH, default=None, help="Model: position embeddings (default 512).")
@click.option("--dropout", type=float, default=None, help="Model: dropout (default 0.1).")
@click.option("--shuffle/--no-shuffle", default=True, show_default=True,
              help="Visit the documents in a new order each epoch and draw examples through a shuffle buffer; "
                   "--no-shuffle reads the files in order.")
@click.option("--shuffle-buffer", type=int, default=None, metavar="N",
              help="Examples the shuffle buffer holds (default 16384; 0: documents shuffled, examples in order).")
@click.option("--threads", type=THREADS, default=None, metavar="N", help="torch threads (default: torch's choice).")
@click.option("--bf16/--no-bf16", default=None,
              help="bfloat16 autocast in the forward pass (weights stay float32). Default: on where it is "
                   "fast (CUDA, or a CPU with avx512_bf16/AMX).")
@click.option("--device", default=None, help="cpu, cuda, cuda:1 ... (default: cuda when available).")
@click.option("--force", is_flag=True,
              help="Replace RUN_DIR even if it holds an earlier run or other files (at the new run's first "
                   "checkpoint; until then RUN_DIR is left as it was).")
@click.option("--text-field", default=Fields.text, show_default=True, metavar="NAME",
              help="Labelled corpus files (.jsonl, .json, .csv, .tsv): the field holding the text; each row is "
                   "one document and its labels are never read.")
@click.option("--text-pair-field", default=Fields.text_pair, show_default=True, metavar="NAME",
              help="Labelled corpus files: the field holding a pair's second text, when a row has one (read into "
                   "the same document).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary.")
def command(corpus, tokenizer_dir, output, objective, generator_layers, arch, steps, batch_size, max_length, lr,
            warmup_steps, warmup_seconds, weight_decay, clip, seed, mlm_probability, mlm_probability_end,
            whole_word_masking, eval_file, eval_every, eval_every_seconds, eval_blocks, checkpoint_every, log_every,
            max_time, resume, init_dir, layers, hidden, heads, ffn, positions, dropout, shuffle, shuffle_buffer,
            threads, bf16, device, force, text_field, text_pair_field, quiet):
    """Pretrain a BERT or ModernBERT on CORPUS (text files, labelled files read for their texts, or one shard
    folder from `tokkit encode --pretraining`).

    Runs under torchrun too: `torchrun --nproc-per-node 2 -m tokkit.cli pretrain ...`.
    """
    try:
        from tokkit.bert.train import PretrainConfig, pretrain
    except ImportError as exc:
        raise TokkitError(f"tokkit pretrain needs torch and safetensors: pip install 'tokkit[bert]' ({exc})")

    buffer = {} if shuffle_buffer is None else {"shuffle_buffer": shuffle_buffer}
    cfg = PretrainConfig(
        objective=objective, generator_layers=generator_layers, arch=arch, steps=steps, batch_size=batch_size,
        max_length=max_length, lr=lr,
        warmup_steps=warmup_steps, warmup_seconds=warmup_seconds, weight_decay=weight_decay, clip=clip, seed=seed,
        mlm_probability=mlm_probability, mlm_probability_end=mlm_probability_end,
        whole_word_masking=whole_word_masking, eval_every=eval_every,
        eval_every_seconds=eval_every_seconds, eval_blocks=eval_blocks,
        checkpoint_every=checkpoint_every, log_every=log_every, max_time=max_time, threads=threads, bf16=bf16,
        device=device, shuffle=shuffle, **buffer,
        model=_model_overrides(layers, hidden, heads, ffn, positions, dropout))
    summary = pretrain(tokenizer_dir, list(corpus), output, config=cfg, eval_file=eval_file, resume=resume,
                       init=init_dir, progress=None if not quiet else False, force=force,
                       fields=Fields(text=text_field, text_pair=text_pair_field))
    if not quiet:
        brief = {"arch": summary["arch"], "steps": summary["steps"], "train_seconds": summary["train_seconds"],
                 "peak_rss_mb": summary["peak_rss_mb"],
                 "train_loss": (summary.get("final_train") or {}).get("loss")}
        if summary.get("final_eval"):
            ev = summary["final_eval"]
            brief.update({k: ev[k] for k in ("mlm_loss", "perplexity", "mask_acc", "labelled_acc",
                                             "baseline_mask_acc", "mask_acc_ratio")})
        click.echo(json.dumps(brief, indent=1))
