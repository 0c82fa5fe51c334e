"""The bert tests' helper tokenizer works (tokkit's own, or the adapter around `tokenizers`)."""
from helpers.bert import wordpiece_tokenizer


def test_support_tokenizer_round_trip(tmp_path):
    tok = wordpiece_tokenizer(tmp_path)
    ids = tok.encode("the cat sat on the mat")
    assert ids and all(0 <= i < tok.vocab_size for i in ids)
    assert tok.token_to_id("[MASK]") is not None
    assert (tmp_path / "vocab.txt").exists()
