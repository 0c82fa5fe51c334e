"""`tokkit evaluate`: a fine-tuned model's metrics on a labelled file (needs torch)."""
from __future__ import annotations

import json

import click

from tokkit._files import atomic_write
from tokkit.cli.model_options import THREADS
from tokkit.cli.task_options import field_options, fields_from
from tokkit.errors import TokkitError
from tokkit.labelled import format_report


@click.command("evaluate")
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option("-m", "--model", "model_dir", required=True, metavar="OUT", help="A fine-tuned model folder.")
@click.option("-o", "--output", default=None, metavar="FILE", help="Also write the report as JSON.")
@click.option("--threads", type=THREADS, default=None, metavar="N")
@click.option("--device", default=None, help="cpu, cuda, ... (default: cuda when available).")
@click.option("--unseen-labels", type=click.Choice(["error", "wrong"]), default="error", show_default=True,
              help="A label of the evaluation file that the model was not trained on: an error, or a "
                   "prediction it cannot make, scored as wrong.")
@field_options
def command(files, model_dir, output, threads, device, unseen_labels, **params):
    """Print accuracy and macro F1 with a per-label table (classify), token accuracy and macro F1
    (tag), exact match and F1 (qa), or MSE and Pearson's r (regress) of OUT on each FILE."""
    try:
        from tokkit.bert.predict import evaluate_file, load_finetuned
    except ImportError as exc:
        raise TokkitError(f"tokkit evaluate needs torch and safetensors: pip install 'tokkit[bert]' ({exc})")

    fields = fields_from(params)
    ft = load_finetuned(model_dir, device=device, threads=threads)
    reports = {}
    for path in files:
        reports[path] = evaluate_file(ft, path, fields=fields, unseen_labels=unseen_labels)
        click.echo(f"{path} ({ft.task})")
        click.echo(format_report(reports[path]))
    if output is not None:
        atomic_write(output, json.dumps(reports if len(files) > 1 else reports[files[0]], indent=1, sort_keys=True))
