"""Stubs for tokkit._native.symbols: character statistics and symbolization of counted words."""
from typing import Mapping, Sequence

import numpy as np

_Table = Mapping[int, int] | np.ndarray

def char_counts(blob: bytes, offsets: Sequence[int] | np.ndarray, counts: Sequence[int] | np.ndarray) -> dict[int, int]: ...
def symbolize(
    blob: bytes, offsets: Sequence[int] | np.ndarray, *, first: _Table, middle: _Table, last: _Table, single: _Table
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
def symbolize_bytes(
    blob: bytes, offsets: Sequence[int] | np.ndarray, byte_ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]: ...
