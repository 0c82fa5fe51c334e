"""Quality figures of vocabularies: `tokkit stats` (one vocabulary) and `tokkit compare` (several).

>>> from tokkit.quality.stats import corpus_stats
>>> from tokkit.tokenizer import Tokenizer
>>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "low", "##er", "new"], merges=None,
...                              special_tokens=["[UNK]"])
>>> stats = corpus_stats(tok, ["lower new", "newer"])
>>> round(stats["fertility"], 2), stats["unk_rate"]  # 5 tokens for 3 words: "new ##er" is two
(1.67, 0.0)
"""
