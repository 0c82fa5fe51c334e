"""What the commands check about their paths before any work: outputs usable and apart from inputs.

The overlap rule itself lives in `tokkit._files.check_output_not_input`; this module adds what
only the commands know: which files a tokenizer path stands for, and an output file's folder.

>>> check_paths("tok/ids.txt", tokenizer_inputs("tok"), file=True)
Traceback (most recent call last):
tokkit.errors.TokkitError: -o/--output tok/ids.txt: lies inside the input folder tok; write it elsewhere
"""
from __future__ import annotations

import os
from pathlib import Path

from tokkit._files import check_output_not_input
from tokkit.errors import TokkitError

# The files a tokenizer folder may hold. Given one of them, the loader also reads others beside
# it (merges.txt for a vocab.json, tokenizer_config.json for a vocab.txt), so all count as inputs.
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "merges.txt", "tokenizer_config.json",
                   "special_tokens_map.json")


def tokenizer_inputs(path: str) -> list[str]:
    """The paths a `-t` tokenizer stands for: the folder, or the file and its side files.

    >>> tokenizer_inputs("tok")
    ['tok']
    """
    if not os.path.isfile(path):
        return [path]
    folder = os.path.dirname(path)
    return [path] + [os.path.join(folder, name) for name in TOKENIZER_FILES]


def check_paths(output: str | None, inputs, *, file: bool) -> None:
    """Before any work: `output` (a file when `file`, else a folder) usable and apart from `inputs`."""
    if output is None:
        return
    if output == "":
        raise TokkitError("-o/--output is empty; give a path")
    check_output_not_input(output, inputs)
    if file:
        check_output_file(output)


def check_output_file(output: str) -> None:
    """Refuse an output file path that cannot be written: a folder, or a place without a writable folder."""
    path = Path(output)
    if path.is_dir():
        raise TokkitError(f"{output}: is a folder; -o/--output needs a file path")
    parent = path.absolute().parent
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise TokkitError(f"{output}: cannot write: {parent} {what}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise TokkitError(f"{output}: cannot write: folder {parent} is not writable")
