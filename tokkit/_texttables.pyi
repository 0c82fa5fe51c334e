"""Stubs for tokkit._texttables: lookup arrays for the text kernels, built from the JSON tables."""
from typing import Any

import numpy as np

TABLES: str

def two_stage(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
def build_tables(bits: dict[str, int], path: str = ...) -> dict[str, Any]: ...
