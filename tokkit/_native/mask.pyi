"""Type stub for the compiled masking kernel (see tokkit/inputs/masking.py for the public API)."""
from typing import Optional

import numpy as np

class Tables:
    """Typed views of one setting's lookup tables (built once per `tokkit.inputs.masking.MaskSpec`)."""

    def __init__(
        self,
        special: np.ndarray,
        skip: np.ndarray,
        vocab: int,
        cdf: np.ndarray,
        start: np.ndarray,
        t_choose: int,
        t_mask: int,
        t_rand: int,
        mask_id: int,
    ) -> None: ...

def mask_rows(
    ids: np.ndarray,
    special: np.ndarray,
    words: Optional[np.ndarray],
    keys: Optional[np.ndarray],
    tables: Tables,
    out: np.ndarray,
    labels: np.ndarray,
    seed: int = 0,
    threads: int = 1,
) -> int:
    """Mask rows of `ids` (int32 or int64, C-contiguous, 2-D) into `out` and `labels`.

    Row keys are `keys` (uint64, shape (rows, 2)) or, when None, derived from `seed`.
    Returns the index of a row holding an id outside [0, vocab), or -1.
    """
