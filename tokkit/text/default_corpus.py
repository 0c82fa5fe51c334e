"""The embedded default corpus: CPython's own reference documentation (`pydoc_data.topics`).

It ships with every Python, needs no download, and tokkit copies nothing into its repository.
Its exact text differs between Python versions, so nothing may depend on its exact content.

>>> texts = list(default_texts())
>>> len(texts) > 10 and all(isinstance(t, str) for t in texts)
True
"""
from __future__ import annotations

from typing import Iterator

from tokkit.errors import TokkitError

try:
    from pydoc_data.topics import topics
except ImportError:  # some distributions strip pydoc_data
    topics = None


def default_texts() -> Iterator[str]:
    """Yield the topic texts line by line, topics in sorted order (deterministic per Python version)."""
    if topics is None:
        raise TokkitError("this Python has no pydoc_data; give a corpus file")
    for name in sorted(topics):
        yield from topics[name].splitlines(keepends=True)
