"""Options every labelled-data command shares: the names of the fields it reads."""
from __future__ import annotations

import click

from tokkit.labelled import Fields

FIELD_OPTIONS = (("text", "text"), ("text_pair", "text_pair"), ("label", "label"), ("tokens", "tokens"),
                 ("tags", "tags"), ("question", "question"), ("context", "context"), ("answers", "answers"),
                 ("id", "id"))


def field_options(command):
    """Add --text-field, --label-field, ... (the JSON keys or CSV/TSV columns read) to a command."""
    for name, default in reversed(FIELD_OPTIONS):
        flag = f"--{name.replace('_', '-')}-field"
        command = click.option(flag, f"{name}_field", default=default, show_default=True, metavar="NAME",
                               help=f"Field holding the {name.replace('_', ' ')}.")(command)
    return command


def fields_from(params: dict):
    """The Fields named by a command's field options (removed from `params`)."""
    return Fields(**{name: params.pop(f"{name}_field") for name, _ in FIELD_OPTIONS})
