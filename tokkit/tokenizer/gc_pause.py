"""Pause Python's cyclic garbage collector while a tokenizer's big structures are built.

Reading a 128k-token file makes a few hundred thousand containers (the JSON's lists and dicts, the
merge pairs); each batch of them starts a collection that walks every container still alive, so the
collector's passes cost about as much as the parsing. Those objects hold no cycles worth collecting
then, so the collector waits until the build is done (and runs as before afterwards).

>>> import gc
>>> with paused_gc():
...     gc.isenabled()
False
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused_gc():
    """The collector off inside the block, and back as it was after (also when the block raises)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
