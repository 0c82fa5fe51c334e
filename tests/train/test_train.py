"""The three trainers: parity with `tokenizers` (byte-level), alphabets, options, determinism."""
import json
from pathlib import Path

import pytest
from helpers.paths import HAVE_CORPUS, SHARED

import tokkit
from tokkit.errors import TokkitError

tokenizers = pytest.importorskip("tokenizers")


def sample_text(n_bytes: int) -> str:
    """Real text: the start of the wiki corpus when present, else the embedded default corpus."""
    if HAVE_CORPUS:
        data = b""
        for path in sorted((SHARED / "en" / "wiki").glob("*.txt")):
            data += path.read_bytes()
            if len(data) >= n_bytes:
                break
        data = data[:n_bytes]
        return data[: data.rfind(b"\n") + 1].decode("utf-8")
    from tokkit.text.default_corpus import default_texts

    return "".join(default_texts())[:n_bytes]


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "sample.txt"
    path.write_text(sample_text(1_500_000), encoding="utf-8")
    return path


def read_merges(folder: Path) -> list[tuple[str, str]]:
    lines = (folder / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("#version")
    return [tuple(line.split(" ")) for line in lines[1:]]


def oracle_bytelevel(path, *, vocab_size, min_frequency, specials):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train([str(path)], trainer)
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return model["vocab"], merges


@pytest.mark.parametrize("specials", [[], ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]])
def test_bytelevel_merges_equal_tokenizers(corpus_file, tmp_path, specials):
    vocab_size = 3000
    tok = tokkit.train(corpus_file, algo="bytelevel", vocab_size=vocab_size, min_frequency=2,
                       special_tokens=specials, default_specials=False)
    tok.save(tmp_path)
    ref_vocab, ref_merges = oracle_bytelevel(corpus_file, vocab_size=vocab_size, min_frequency=2, specials=specials)
    assert read_merges(tmp_path) == ref_merges
    assert json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8")) == ref_vocab


def test_bytelevel_min_frequency_stops_early_like_tokenizers(corpus_file, tmp_path):
    # With a high min_frequency the vocabulary is never filled: training stops on the threshold.
    tok = tokkit.train(corpus_file, algo="bytelevel", vocab_size=50_000, min_frequency=400, default_specials=False)
    tok.save(tmp_path)
    _, ref_merges = oracle_bytelevel(corpus_file, vocab_size=50_000, min_frequency=400, specials=[])
    ours = read_merges(tmp_path)
    assert 0 < len(ours) < 50_000 - 256
    assert ours == ref_merges


def test_bytelevel_alphabet_is_ordered_by_symbol_code_point(tmp_path):
    tok = tokkit.train(texts=["hello world"] * 3, algo="bytelevel", vocab_size=300)
    tok.save(tmp_path)
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    specials = ["[PAD]", "[CLS]", "[SEP]", "[MASK]"]  # bytelevel has no [UNK]
    assert [t for t, i in sorted(vocab.items(), key=lambda kv: kv[1])][:4] == specials
    alphabet = [t for t, i in sorted(vocab.items(), key=lambda kv: kv[1])][4:260]
    assert len(alphabet) == 256 and alphabet == sorted(alphabet)


def test_wordpiece_vocab_layout(tmp_path):
    texts = ["Hello héllo HELLO world worlds wordy", "the theory theatre"] * 20
    tok = tokkit.train(texts=texts, algo="wordpiece", vocab_size=200, min_frequency=2)
    tok.save(tmp_path)
    vocab = (tmp_path / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    plain = [t for t in vocab[5:] if len(t) == 1]
    cont = [t for t in vocab[5:] if len(t) == 3 and t.startswith("##")]
    # alphabet: characters by code point, then the ##c that occur, by c; lowercased, accents stripped
    assert vocab[5:5 + len(plain)] == sorted(plain)
    assert vocab[5 + len(plain):5 + len(plain) + len(cont)] == sorted(cont)
    assert "H" not in plain and "é" not in plain and "h" in plain
    assert "hello" in vocab and "world" in vocab and len(vocab) == len(set(vocab))


def test_wordpiece_pmi_and_frequency_pick_different_first_merges():
    # counts: t 20, ##h 20, ##e 10, a 10, q 2, ##z 2. Frequency: three pairs of 10, the smallest ids win
    # -> (a, ##h). PMI: (q, ##z) scores 2 / (2 * 2) = 0.5, far above 10 / (10 * 20) = 0.05.
    texts = ["th te ah"] * 10 + ["qz"] * 2
    size = 5 + 6 + 3 + 1  # specials, a e h q t z, ##e ##h ##z, one merge
    pmi = tokkit.train(texts=texts, algo="wordpiece", vocab_size=size, min_frequency=2, scoring="pmi")
    freq = tokkit.train(texts=texts, algo="wordpiece", vocab_size=size, min_frequency=2, scoring="frequency")
    assert pmi.vocab_size == freq.vocab_size == size
    assert pmi.id_to_token(size - 1) == "qz"
    assert freq.id_to_token(size - 1) == "ah"


def test_wordpiece_default_scoring_is_frequency():
    # counts: a 110, ##b 10, c 9, ##d 9, N = 138. Frequency: (a, ##b) 10 beats (c, ##d) 9. Likelihood:
    # (c, ##d) gains 33.27 (its halves only ever meet), (a, ##b) 2.37 (a is mostly alone).
    from tokkit.train.merge_py import likelihood_score

    texts = ["ab"] * 10 + ["a"] * 100 + ["cd"] * 9
    size = 5 + 4 + 2 + 1  # specials, a b c d, ##b ##d, one merge
    assert likelihood_score(9, 9, 9, 138) > likelihood_score(10, 110, 10, 138)
    default = tokkit.train(texts=texts, algo="wordpiece", vocab_size=size, min_frequency=2)
    freq = tokkit.train(texts=texts, algo="wordpiece", vocab_size=size, min_frequency=2, scoring="frequency")
    lik = tokkit.train(texts=texts, algo="wordpiece", vocab_size=size, min_frequency=2, scoring="likelihood")
    assert default.vocab_size == lik.vocab_size == size
    assert default.id_to_token(size - 1) == freq.id_to_token(size - 1) == "ab"
    assert lik.id_to_token(size - 1) == "cd"


def test_wordpiece_likelihood_scoring_order():
    # Same counts as the pmi/frequency test above, N = 64. Likelihood gains: (t, ##e) and (a, ##h) both f(10) - f(20) + f(64) - f(54) = 13.87
    # (the same doubles and count: the smaller ids win -> (a, ##h)); (q, ##z) = -f(2) + f(64) - f(62) = 8.90;
    # (t, ##h) = 3 f(10) - 2 f(20) + f(64) - f(54) = 0.01. Then (t, ##e), which ties (t, ##h) and wins on ids,
    # and (t, ##h) rises past (q, ##z) once t has lost 10: the rare pair PMI puts first comes last.
    from tokkit.train.merge_py import likelihood_score

    texts = ["th te ah"] * 10 + ["qz"] * 2
    size = 5 + 6 + 3 + 1
    assert likelihood_score(10, 20, 10, 64) == likelihood_score(10, 10, 20, 64) > likelihood_score(2, 2, 2, 64)
    assert likelihood_score(2, 2, 2, 64) > likelihood_score(10, 20, 20, 64)
    first = tokkit.train(texts=texts, algo="wordpiece", vocab_size=size, min_frequency=2, scoring="likelihood")
    assert first.id_to_token(size - 1) == "ah"
    more = tokkit.train(texts=texts, algo="wordpiece", vocab_size=size + 3, min_frequency=2, scoring="likelihood")
    assert [more.id_to_token(i) for i in range(size - 1, size + 3)] == ["ah", "te", "th", "qz"]


def test_bpe_end_of_word_suffix_and_alphabet(tmp_path):
    tok = tokkit.train(texts=["low lower lowest newer wider"] * 10, algo="bpe", vocab_size=100)
    tok.save(tmp_path)
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    order = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    assert order[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    plain = [t for t in order[5:] if len(t) == 1]
    suffixed = [t for t in order[5:] if len(t) == 5 and t.endswith("</w>")]
    assert order[5:5 + len(plain)] == sorted(plain)
    assert order[5 + len(plain):5 + len(plain) + len(suffixed)] == sorted(suffixed)
    assert "w</w>" in suffixed and "r</w>" in suffixed and "l</w>" not in suffixed
    merges = read_merges(tmp_path)
    assert all(vocab["".join(m)] > max(vocab[m[0]], vocab[m[1]]) or "".join(m) in vocab for m in merges)
    assert "low</w>" in vocab


def test_limit_alphabet_skips_words_with_rare_characters():
    from tokkit.train import train

    texts = ["aaa bbb abab zq"] * 5 + ["xyz"]
    tok, summary = train(texts=texts, algo="wordpiece", vocab_size=100, limit_alphabet=2, return_summary=True)
    assert summary.alphabet == 2 + 2  # a, b, ##a, ##b
    assert summary.skipped_words == 2 and summary.skipped_occurrences == 6
    assert tok.token_to_id("z") is None


def test_vocab_size_below_specials_and_alphabet_is_refused():
    with pytest.raises(TokkitError, match="vocab-size"):
        tokkit.train(texts=["hello world"], algo="bytelevel", vocab_size=100)


@pytest.mark.parametrize("bad", [[""], ["[X]", "[X]"], ["  "]])
def test_bad_special_tokens(bad):
    with pytest.raises(TokkitError, match="special token"):
        tokkit.train(texts=["hello world"], algo="wordpiece", vocab_size=100, special_tokens=bad)


def test_no_default_specials_keeps_unk_for_wordpiece_and_bpe():
    for algo in ("wordpiece", "bpe"):
        tok = tokkit.train(texts=["a b c ab"] * 3, algo=algo, vocab_size=50, default_specials=False)
        assert tok.special_tokens == ["[UNK]"]
    tok = tokkit.train(texts=["a b c ab"] * 3, algo="bytelevel", vocab_size=300, default_specials=False)
    assert tok.special_tokens == []


def test_special_token_text_in_corpus_is_plain_text(tmp_path):
    tok = tokkit.train(texts=["[CLS] hello [SEP]"] * 10, algo="wordpiece", vocab_size=100)
    tok.save(tmp_path)
    vocab = (tmp_path / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert vocab.count("[CLS]") == 1  # only the special itself
    assert "cls" in vocab  # the text "[CLS]" was lowercased and split like any other word


@pytest.mark.parametrize("algo", ["wordpiece", "bpe", "bytelevel"])
def test_same_result_whatever_the_workers(corpus_file, tmp_path, algo):
    outs = []
    for workers in (1, 2):
        tok = tokkit.train(corpus_file, algo=algo, vocab_size=1500, workers=workers)
        out = tmp_path / f"w{workers}"
        out.mkdir()
        tok.save(out)
        outs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert outs[0] == outs[1]


def test_files_and_texts_give_the_same_vocab_for_bert_modes(corpus_file):
    text = corpus_file.read_text(encoding="utf-8")
    a = tokkit.train(corpus_file, algo="wordpiece", vocab_size=800)
    b = tokkit.train(texts=text.splitlines(keepends=True), algo="wordpiece", vocab_size=800)
    assert [a.id_to_token(i) for i in range(a.vocab_size)] == [b.id_to_token(i) for i in range(b.vocab_size)]


def test_engines_agree_on_a_real_corpus():
    texts = sample_text(60_000).splitlines(keepends=True)
    for algo in ("wordpiece", "bytelevel"):
        a = tokkit.train(texts=texts, algo=algo, vocab_size=700, engine="compiled")
        b = tokkit.train(texts=texts, algo=algo, vocab_size=700, engine="python")
        assert [a.id_to_token(i) for i in range(a.vocab_size)] == [b.id_to_token(i) for i in range(b.vocab_size)]
