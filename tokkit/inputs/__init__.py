"""BERT inputs from a Tokenizer: `encode` (pairs, truncation, padding) and `mask_tokens` (80/10/10).

Neither needs torch: both return numpy arrays.

>>> import numpy as np
>>> masked, labels = mask_tokens(np.full((1, 6), 9), np.zeros((1, 6)), vocab_size=12, mask_token_id=4,
...                              special_ids=[4], rng=np.random.default_rng(0), mlm_probability=0.5)
>>> bool(((labels == 9) | (labels == -100)).all()), masked.shape
(True, (1, 6))
"""
from tokkit.inputs.encode import encode as encode
from tokkit.inputs.masking import mask_tokens as mask_tokens
