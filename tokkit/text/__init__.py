"""The text stage: reading corpora, BERT normalisation, GPT-2 pre-tokenisation and word counting.

>>> from tokkit.text.pretokenize import GPT2_PATTERN
"""
