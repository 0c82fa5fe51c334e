"""Type stub for the compiled merge engine (same API as tokkit.train.merge_py)."""
from typing import Callable, Optional

import numpy as np
import numpy.typing as npt

def train_merges(
    symbols: npt.ArrayLike,
    offsets: npt.ArrayLike,
    counts: npt.ArrayLike,
    *,
    vocab_len: int,
    vocab_size: int,
    min_frequency: int = 2,
    scoring: str = "frequency",
    merge_id: Optional[Callable[[int, int], int]] = None,
    progress: Optional[Callable[[int], object]] = None,
) -> list[tuple[int, int, int]]:
    """Learn merges until the vocab holds `vocab_size` ids or no pair reaches `min_frequency`.

    `symbols` (int32) holds every word's symbol ids back to back, word i being
    symbols[offsets[i]:offsets[i + 1]]; `counts` (int64) are the word frequencies.
    Returns [(left id, right id, new id), ...] in merge order.
    """

class _Engine:
    def __init__(
        self,
        symbols: np.ndarray,
        offsets: np.ndarray,
        counts: np.ndarray,
        vocab_len: int,
        pmi: bool,
        min_frequency: int,
        lik: bool = False,
    ) -> None: ...

def likelihood_score(n: int, count_a: int, count_b: int, total: int, same: bool = False) -> float:
    """The compiled engine's likelihood gain (equal, bit for bit, to tokkit.train.merge_py.likelihood_score)."""
