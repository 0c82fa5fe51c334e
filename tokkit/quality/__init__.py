"""Quality figures of vocabularies: `tokkit stats` (one vocabulary) and `tokkit compare` (several).

>>> from tokkit.quality.stats import corpus_stats
"""
