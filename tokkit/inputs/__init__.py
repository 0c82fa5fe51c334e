"""BERT inputs from a Tokenizer: `encode` (pairs, truncation, padding) and `mask_tokens` (80/10/10).

Neither needs torch: both return numpy arrays.

>>> from tokkit.inputs import encode, mask_tokens
"""
from tokkit.inputs.encode import encode as encode
from tokkit.inputs.masking import mask_tokens as mask_tokens
