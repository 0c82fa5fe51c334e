"""The ranges of the options that size a model or set up torch, shared by pretrain, finetune,
evaluate and predict: a value past them is a usage error (one line, exit 2) before any work,
never an overflow or an allocation inside torch."""
from __future__ import annotations

import click

from tokkit._shape import MAX_LAYERS, MAX_SEED, MAX_WIDTH
from tokkit._threads import MAX_THREADS

# The shape options' least value, 1, is checked with the others' (tokkit.cli.pretrain._model_overrides).
LAYERS = click.IntRange(max=MAX_LAYERS)
WIDTH = click.IntRange(max=MAX_WIDTH)     # --hidden, --heads, --ffn, --positions
SEED = click.IntRange(0, MAX_SEED)
THREADS = click.IntRange(1, MAX_THREADS)  # torch.set_num_threads takes a C int


class _LengthOrAuto(click.ParamType):
    """--max-length: a whole number, or "auto" (fitted to the task's texts, tokkit.labelled.lengths)."""

    name = "N|auto"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or value == "auto":
            return value
        try:
            return int(value)
        except ValueError:
            self.fail(f"{value!r} is neither a whole number nor 'auto'", param, ctx)


LENGTH = _LengthOrAuto()
