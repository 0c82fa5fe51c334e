"""Shared helpers for the tokkit.bert tests: a small WordPiece tokenizer and a tiny corpus.

While tokkit's own Tokenizer is not importable, `wordpiece_tokenizer` falls back to a test-only
adapter around the `tokenizers` library that offers the same methods tokkit.bert uses.
"""
import json
import os

import pytest

WORDS = ("the cat sat on a mat while the dog ran to the park and a bird sang in the tall green tree "
         "people walk along the river every morning before work because the air is fresh and cool").split()


def tiny_corpus(n_docs=60, seed=0):
    """Documents of a few sentences each, separated by blank lines, drawn from a tiny vocabulary."""
    import random

    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        sents = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) + " ." for _ in range(4)]
        docs.append("\n".join(sents))
    return "\n\n".join(docs) + "\n"


class _HFWordPiece:
    """Test-only stand-in for tokkit.Tokenizer, backed by `tokenizers` (never used by runtime code)."""

    def __init__(self, tk):
        self._tk = tk
        self.special_tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

    @property
    def vocab_size(self):
        return self._tk.get_vocab_size()

    def token_to_id(self, tok):
        return self._tk.token_to_id(tok)

    def id_to_token(self, i):
        return self._tk.id_to_token(i)

    def encode(self, text):
        return self._tk.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts):
        return [e.ids for e in self._tk.encode_batch(list(texts), add_special_tokens=False)]

    def save(self, directory):
        os.makedirs(directory, exist_ok=True)
        self._tk.save(os.path.join(directory, "tokenizer.json"))
        vocab = sorted(self._tk.get_vocab().items(), key=lambda kv: kv[1])
        with open(os.path.join(directory, "vocab.txt"), "w", encoding="utf-8") as f:
            f.writelines(t + "\n" for t, _ in vocab)
        with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
            json.dump({"tokenizer_class": "BertTokenizerFast", "do_lower_case": True,
                       "model_max_length": 512}, f)
        with open(os.path.join(directory, "special_tokens_map.json"), "w") as f:
            json.dump({"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]",
                       "sep_token": "[SEP]", "mask_token": "[MASK]"}, f)


def wordpiece_tokenizer(directory, texts=None, vocab_size=120, special_tokens=None):
    """A WordPiece tokenizer trained on `texts` (default: the tiny corpus), saved to `directory`."""
    texts = list(texts) if texts is not None else tiny_corpus().split("\n")
    specials = special_tokens or ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    try:
        import tokkit
        from tokkit import tokenizer as _  # noqa: F401 - is tokkit's own Tokenizer there yet?

        # default_specials=False: tokkit.train otherwise adds the five defaults to the list given
        tok = tokkit.train(texts=texts, algo="wordpiece", vocab_size=vocab_size, min_frequency=1,
                           special_tokens=specials, default_specials=False)
    except ImportError:
        tokenizers = pytest.importorskip("tokenizers")
        from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

        tk = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tk.normalizer = normalizers.BertNormalizer(lowercase=True)
        tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tk.decoder = decoders.WordPiece()
        tk.train_from_iterator(texts, trainers.WordPieceTrainer(
            vocab_size=vocab_size, min_frequency=1,
            special_tokens=specials))
        tk.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
        tok = _HFWordPiece(tk)
        tok.special_tokens = specials
    tok.save(str(directory))
    return tok


def pretrain_folder(d):
    """A pretraining run's inputs in folder `d`: corpus.txt, heldout.txt and a small WordPiece tok/."""
    (d / "corpus.txt").write_text(tiny_corpus(240), encoding="utf-8")
    (d / "heldout.txt").write_text(tiny_corpus(40, seed=7), encoding="utf-8")
    wordpiece_tokenizer(d / "tok", texts=tiny_corpus(240).splitlines(), vocab_size=150)
    return d


def load_saved_in_auto_classes(folder, tok, auto_model):
    """The model transformers' `auto_model` loads from `folder` (written by save_hf), after checking
    that AutoTokenizer there encodes like `tok`."""
    import transformers

    auto = transformers.AutoTokenizer.from_pretrained(folder)
    text = "the quick brown fox jumps"
    assert auto(text)["input_ids"][1:-1] == tok.encode(text)
    hf = auto_model.from_pretrained(folder)
    assert hf.config.vocab_size == tok.vocab_size
    return hf
