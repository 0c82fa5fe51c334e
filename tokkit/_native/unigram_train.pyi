import numpy as np
from numpy.typing import NDArray

def e_step(piece_cps: NDArray[np.int32], piece_offsets: NDArray[np.int64], scores: NDArray[np.float64],
           word_cps: NDArray[np.int32], word_offsets: NDArray[np.int64], counts: NDArray[np.int64],
           *, unk_score: float, threads: int = 1) -> tuple[NDArray[np.float64], float]: ...
def viterbi_counts(piece_cps: NDArray[np.int32], piece_offsets: NDArray[np.int64], scores: NDArray[np.float64],
                   word_cps: NDArray[np.int32], word_offsets: NDArray[np.int64], counts: NDArray[np.int64],
                   *, unk_score: float, threads: int = 1) -> NDArray[np.float64]: ...
def alternatives(piece_cps: NDArray[np.int32], piece_offsets: NDArray[np.int64], scores: NDArray[np.float64],
                 *, unk_score: float) -> tuple[NDArray[np.int8], NDArray[np.int32], NDArray[np.int64]]: ...
def count_substrings(word_cps: NDArray[np.int32], word_offsets: NDArray[np.int64], counts: NDArray[np.int64],
                     classes: NDArray[np.int32], *, max_length: int,
                     min_count: int) -> tuple[NDArray[np.int32], NDArray[np.int64], NDArray[np.int64]]: ...
