"""`tokkit export`: a pretraining run's model and tokenizer as a folder transformers loads (needs torch)."""
from __future__ import annotations

import click

from tokkit._files import check_output_not_input
from tokkit.errors import TokkitError


@click.command("export")
@click.argument("run", metavar="RUN")
@click.option("-o", "--output", required=True, metavar="DIR",
              help="Folder for config.json, model.safetensors and the tokenizer's files.")
@click.option("-t", "--tokenizer", "tokenizer_dir", default=None, metavar="DIR",
              help="The run's tokenizer (default: the copy in RUN's checkpoint; checked against it).")
@click.option("--force", is_flag=True, help="Replace DIR even if it holds files other than an exported model.")
def command(run, output, tokenizer_dir, force):
    """Write the model of RUN (a `tokkit pretrain` run folder or its checkpoint/) to DIR.

    AutoTokenizer, AutoModelForMaskedLM, AutoModel and pipeline("fill-mask", ...) load DIR.
    """
    try:
        from tokkit.bert.export import export_run, find_checkpoint
    except ImportError as exc:
        raise TokkitError(f"tokkit export needs torch and safetensors: pip install 'tokkit[bert]' ({exc})")

    check_output_not_input(output, [find_checkpoint(run)])
    folder = export_run(run, output, tokenizer=tokenizer_dir, force=force)
    click.echo(f"wrote {folder}", err=True)
