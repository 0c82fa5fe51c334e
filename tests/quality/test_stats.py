"""tokkit.quality and `tokkit stats`: figures checked by hand on tiny vocabularies and against tokenizers."""
import json

import pytest
from helpers.cli import run_cli

from tokkit.quality.stats import corpus_stats, detect_kind, main_script, script_of, token_surface

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TEXT = ("The quick brown fox jumps over the lazy dog.\nA second line, with commas; and more words!\n\n"
        "Numbers 123 and 4567 too.\n") * 40


class Adapter:
    """Test-only: a tokenizers.Tokenizer seen through tokkit's Tokenizer interface."""

    def __init__(self, tok, kind):
        self.tok, self.kind = tok, kind

    def encode_batch(self, texts, *, num_threads=None):
        return [e.ids for e in self.tok.encode_batch(texts, add_special_tokens=False)]

    def id_to_token(self, i):
        return self.tok.id_to_token(i)

    def token_to_id(self, t):
        return self.tok.token_to_id(t)

    @property
    def vocab_size(self):
        return self.tok.get_vocab_size()

    @property
    def special_tokens(self):
        return [t for t in SPECIALS if self.tok.token_to_id(t) is not None]


run = run_cli


def hand_wordpiece():
    vocab = {t: i for i, t in enumerate(SPECIALS + ["the", "cat", "##s", "dog", "к", "##о", "##т", "longestword"])}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return Adapter(tok, "wordpiece")


def test_hand_computed_figures():
    # the | cat ##s ; the | dog ; [UNK] ; the | к ##о ##т   -> 10 tokens, 7 words
    s = corpus_stats(hand_wordpiece(), ["the cats", "the dog", "", "zebra", "the кот"], top=3)
    assert (s["tokens"], s["words"], s["lines"]) == (10, 7, 4)
    assert s["fertility"] == pytest.approx(10 / 7)
    n_bytes = len("the cats".encode()) + len("the dog".encode()) + len("zebra") + len("the кот".encode())
    assert s["bytes_per_token"] == pytest.approx(n_bytes / 10)
    assert s["unk_rate"] == pytest.approx(1 / 10)
    assert s["vocab_used"] == pytest.approx(7 / 8)  # all but "longestword" of the 8 regular tokens
    # surfaces of the 9 regular tokens: the*3, cat, s, dog, к, о, т
    assert s["mean_token_length"] == pytest.approx((3 * 3 + 3 + 1 + 3 + 1 + 1 + 1) / 9)
    assert s["main_script"] == "Latin"
    assert s["outside_script_rate"] == pytest.approx(3 / 10)
    assert s["longest_tokens"] == ["longestword", "the", "cat"]
    assert s["most_frequent"][0] == ("the", 3)


def test_script_helpers():
    assert [script_of(c) for c in "aжαあ中한1,"] == ["Latin", "Cyrillic", "Greek", "Han/Kana", "Han/Kana",
                                                   "Hangul", None, None]
    assert main_script(["кот и пёс", "a"]) == "Cyrillic"
    assert main_script(["123 !"]) is None
    assert token_surface("##", "wordpiece") == "##"
    assert token_surface("Ã©", "bytelevel") == "é"
    from tokkit._native.byte_symbols import encode_symbols
    from tokkit.quality.stats import token_letters

    cut = encode_symbols("кот".encode()[:3])  # к and the lead byte of о
    assert [script_of(c) for c in token_letters(cut, "bytelevel")] == ["Cyrillic", "Cyrillic"]
    assert token_letters(encode_symbols("к".encode()[1:]), "bytelevel") == ""


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A byte-level and a WordPiece vocabulary trained by tokenizers, saved as folders."""
    root = tmp_path_factory.mktemp("vocabs")
    wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.decoder = decoders.WordPiece()
    wp.train_from_iterator(TEXT.splitlines(), trainers.WordPieceTrainer(vocab_size=120, special_tokens=SPECIALS,
                                                                       show_progress=False))
    wp.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    bl = Tokenizer(models.BPE())
    bl.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bl.decoder = decoders.ByteLevel()
    bl.train_from_iterator(TEXT.splitlines(), trainers.BpeTrainer(
        vocab_size=300, special_tokens=["[PAD]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    out = {}
    for name, tok in (("wp", wp), ("bl", bl)):
        (root / name).mkdir()
        tok.save(str(root / name / "tokenizer.json"))
        out[name] = (root / name, tok)
    corpus = root / "corpus.txt"
    corpus.write_text(TEXT + "Кириллица тоже. 日本語も。\n", encoding="utf-8")
    out["corpus"] = corpus
    return out


def test_against_tokenizers_counts(trained):
    lines = [x for x in trained["corpus"].read_text(encoding="utf-8").splitlines() if x.strip()]
    for name, kind in (("wp", "wordpiece"), ("bl", "bytelevel")):
        oracle = trained[name][1]
        encs = oracle.encode_batch(lines, add_special_tokens=False)
        n_tokens = sum(len(e.ids) for e in encs)
        s = corpus_stats(Adapter(oracle, kind), lines)
        assert s["tokens"] == n_tokens
        assert s["fertility"] == pytest.approx(n_tokens / sum(len(x.split()) for x in lines))
        assert s["bytes_per_token"] == pytest.approx(sum(len(x.encode()) for x in lines) / n_tokens)
        if kind == "bytelevel":
            assert s["outside_script_rate"] > 0  # the Cyrillic and Japanese line, as bytes
            assert s["unk_rate"] is None
            # every byte-level token decodes back to text: surfaces join to the input exactly
            text = "".join(token_surface(oracle.id_to_token(i), kind) for e in encs for i in e.ids)
            assert text.replace("\ufffd", "") in "".join(lines) or "\ufffd" in text
        else:
            unk = oracle.token_to_id("[UNK]")
            assert s["unk_rate"] == pytest.approx(sum(e.ids.count(unk) for e in encs) / n_tokens)
            assert s["unk_rate"] > 0  # that line's words are unknown to this vocabulary


def test_tokkit_tokenizer_gives_same_figures(trained):
    import tokkit

    lines = [x for x in trained["corpus"].read_text(encoding="utf-8").splitlines() if x.strip()]
    for name, kind in (("wp", "wordpiece"), ("bl", "bytelevel")):
        tok = tokkit.load(trained[name][0])
        assert detect_kind(tok) == kind
        ours = corpus_stats(tok, lines)
        ref = corpus_stats(Adapter(trained[name][1], kind), lines)
        assert ours == ref


def test_cli_stats(trained, tmp_path, capsys):
    out = tmp_path / "s.json"
    assert run(["stats", "-t", str(trained["wp"][0]), str(trained["corpus"]), "--top", "3", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["kind"] == "wordpiece" and len(data["longest_tokens"]) == 3
    assert f"{data['tokens']:,} tokens" in printed and "tokens per word" in printed


def test_cli_stats_size_limit(trained, tmp_path):
    out = tmp_path / "s.json"
    assert run(["stats", "-t", str(trained["wp"][0]), str(trained["corpus"]), "--size", "200B", "-o", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    # whole non-empty lines, each counted with its line end, while the total stays within 200 bytes
    kept, total = [], 0
    for line in filter(str.strip, TEXT.splitlines()):
        total += len(line.encode()) + 1
        if total > 200:
            break
        kept.append(line)
    assert (data["lines"], data["bytes"]) == (len(kept), sum(len(x.encode()) for x in kept))


@pytest.mark.parametrize("case", ["missing-tokenizer", "missing-corpus", "empty-corpus", "bad-size"])
def test_cli_stats_bad_input(trained, tmp_path, capsys, case):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n   \n")
    args = {"missing-tokenizer": ["-t", str(tmp_path / "nope"), str(trained["corpus"])],
            "missing-corpus": ["-t", str(trained["wp"][0]), str(tmp_path / "nope.txt")],
            "empty-corpus": ["-t", str(trained["wp"][0]), str(empty)],
            "bad-size": ["-t", str(trained["wp"][0]), str(trained["corpus"]), "--size", "ten"]}[case]
    assert run(["stats", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tokkit: error:") and len(err.strip().splitlines()) == 1
