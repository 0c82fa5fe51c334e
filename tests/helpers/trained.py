"""Small tokenizers trained by tokenizers itself on a few lines, as fixtures for added-token tests."""
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers


def wordpiece(lines: list[str]) -> Tokenizer:
    """A BERT-style WordPiece tokenizer (lowercasing BertNormalizer) of 200 tokens trained on `lines`."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=200, special_tokens=["[UNK]"]))
    return tok


def bytelevel(lines: list[str]) -> Tokenizer:
    """A GPT-2-style byte-level BPE tokenizer of 300 tokens trained on `lines`."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=300,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok
