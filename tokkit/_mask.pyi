"""Type stub for the compiled masking kernel (see tokkit/masking.py for the public API)."""
from typing import Optional

import numpy as np

def mask_rows(
    ids: np.ndarray,
    special: np.ndarray,
    words: Optional[np.ndarray],
    keys: np.ndarray,
    is_special: np.ndarray,
    allowed: np.ndarray,
    out: np.ndarray,
    labels: np.ndarray,
    t_choose: int,
    t_mask: int,
    t_rand: int,
    mask_id: int,
    threads: int = 1,
) -> int:
    """Mask rows of `ids` (int32 or int64, C-contiguous, 2-D) into `out` and `labels`.

    Returns the index of a row holding an id outside [0, len(is_special)), or -1.
    """
