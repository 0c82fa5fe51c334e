"""`tokkit predict`: labels, tags or answers from a fine-tuned model, one JSON line per input (needs torch)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from tokkit._progress import Progress
from tokkit.cli.encode import open_output, read_lines
from tokkit.cli.model_options import THREADS
from tokkit.cli.task_options import field_options, fields_from
from tokkit.errors import TokkitError

STRUCTURED = (".jsonl", ".json", ".csv", ".tsv")
BATCH = 256


@click.command("predict")
@click.argument("files", nargs=-1, metavar="[FILES...]")
@click.option("-m", "--model", "model_dir", required=True, metavar="OUT", help="A fine-tuned model folder.")
@click.option("-o", "--output", default=None, metavar="FILE", help="Where the JSON lines go (default: stdout).")
@click.option("--threads", type=THREADS, default=None, metavar="N")
@click.option("--device", default=None, help="cpu, cuda, ... (default: cuda when available).")
@field_options
def command(files, model_dir, output, threads, device, **params):
    """Read texts (one per line; stdin without FILES) or JSONL/JSON/CSV/TSV rows, and write one JSON
    line per input: {"label", "score"}, {"value"}, {"tokens", "tags"} or {"id", "answer", "start", "end", "score"}.

    Plain text is classified line by line, or tagged word by word (words as the tokenizer's
    pre-tokenizer finds them); question answering reads rows with a question and a context.
    """
    try:
        from tokkit.bert.predict import load_finetuned, predict_rows, read_rows, rows_from_lines
    except ImportError as exc:
        raise TokkitError(f"tokkit predict needs torch and safetensors: pip install 'tokkit[bert]' ({exc})")

    fields = fields_from(params)
    ft = load_finetuned(model_dir, device=device, threads=threads)
    with open_output(output) as out:
        for path in files or ["-"]:
            if Path(path).suffix.lower() in STRUCTURED:
                _write(out, predict_rows(ft, read_rows(ft, path, fields=fields)))
                continue
            lines = []
            for _, line in read_lines([path], Progress(enabled=False)):
                lines.append(line)
                if len(lines) == BATCH:
                    _write(out, predict_rows(ft, rows_from_lines(ft, lines)))
                    lines = []
            _write(out, predict_rows(ft, rows_from_lines(ft, lines)))


def _write(out, predictions: list) -> None:
    for p in predictions:
        out.write(json.dumps(p, ensure_ascii=False) + "\n")
