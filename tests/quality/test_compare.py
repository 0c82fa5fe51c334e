"""`tokkit compare`: side-by-side figures of saved vocabularies, and --train with a held-out split."""
import json

import pytest
from helpers.cli import run_cli

from tokkit.errors import TokkitError
from tokkit.quality.compare import compare_table, parse_candidates, split_heldout

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


run = run_cli


def corpus_lines(n=600):
    """Natural-ish English from the embedded corpus (CPython's docs), enough to train small vocabs."""
    from tokkit.text.default_corpus import default_texts

    out = []
    for line in default_texts():
        if line.strip():
            out.append(line.rstrip("\n"))
        if len(out) == n:
            break
    return out


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("cmp")
    lines = corpus_lines()
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dirs = {}
    for name, size in (("small", 200), ("large", 800)):
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        tok.train([str(corpus)], trainers.WordPieceTrainer(vocab_size=size, special_tokens=SPECIALS,
                                                           show_progress=False))
        tok.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
        (root / name).mkdir()
        tok.save(str(root / name / "tokenizer.json"))
        dirs[name] = root / name
    return root, corpus, dirs, lines


def test_compare_dirs_writes_table_json_chart(setup, tmp_path, capsys):
    import tokkit
    from tokkit.quality.stats import corpus_stats

    root, corpus, dirs, lines = setup
    out = tmp_path / "out"
    assert run(["compare", str(dirs["small"]), str(dirs["large"]), "--corpus", str(corpus), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    data = json.loads((out / "compare.json").read_text(encoding="utf-8"))
    assert list(data["results"]) == ["small", "large"]
    for name in ("small", "large"):
        direct = corpus_stats(tokkit.load(dirs[name]), lines)
        got = data["results"][name]
        assert got["tokens"] == direct["tokens"]
        assert got["fertility"] == pytest.approx(direct["fertility"])
    # a larger vocabulary cuts words into fewer pieces on the text it was trained on
    assert data["results"]["large"]["fertility"] < data["results"]["small"]["fertility"]
    header = printed.splitlines()[1]
    assert "small" in header and "large" in header
    md = (out / "compare.md").read_text(encoding="utf-8")
    assert "| tokens per word |" in md
    if pytest.importorskip("matplotlib"):
        assert (out / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_same_basename_uses_paths(setup, tmp_path):
    root, corpus, dirs, _ = setup
    other = tmp_path / "x" / "small"
    other.mkdir(parents=True)
    (other / "tokenizer.json").write_text((dirs["small"] / "tokenizer.json").read_text())
    out = tmp_path / "out"
    assert run(["compare", str(dirs["small"]), str(other), "--corpus", str(corpus), "-o", str(out)]) == 0
    names = list(json.loads((out / "compare.json").read_text())["results"])
    assert names == [str(dirs["small"]), str(other)]


def test_parse_and_split():
    assert [c[0] for c in parse_candidates("all")] == ["wordpiece-pmi", "wordpiece-likelihood", "wordpiece-frequency",
                                                       "bpe", "bytelevel"]
    assert [c[0] for c in parse_candidates("wordpiece,wordpiece-frequency,bpe")] == ["wordpiece-frequency", "bpe"]
    assert [c[0] for c in parse_candidates("wordpiece-pmi,wordpiece")] == ["wordpiece-pmi", "wordpiece-frequency"]
    with pytest.raises(TokkitError, match="unknown candidate 'wordpiece-bigram'"):
        parse_candidates("bpe,wordpiece-bigram")
    assert [c[0] for c in parse_candidates("unigram,bpe")] == ["unigram", "bpe"]
    train, held = split_heldout([str(i) for i in range(100)], 0.1)
    assert held == [str(i) for i in range(90, 100)] and train == [str(i) for i in range(90)]
    with pytest.raises(TokkitError):
        split_heldout(["only one"], 0.1)


def test_markdown_table_has_a_column_per_candidate():
    stats = {"kind": "wordpiece", "vocab_size": 10, "tokens": 5, "fertility": 1.25, "bytes_per_token": 4.0,
             "unk_rate": 0.2, "vocab_used": 0.5, "mean_token_length": 3.0, "outside_script_rate": 0.0,
             "main_script": "Latin"}
    md = compare_table({"a": stats, "b": dict(stats, unk_rate=None)}, markdown=True).splitlines()
    assert md[0] == "|  | a | b |"
    assert "| [UNK] rate | 20.00% | n/a |" in md


def test_compare_train_pmi_likelihood_frequency(setup, tmp_path, capsys):
    root, corpus, dirs, lines = setup
    out = tmp_path / "out"
    assert run(["compare", "--train", "wordpiece-pmi,wordpiece-likelihood,wordpiece", "--vocab-size", "400",
                "--heldout", "0.2", str(corpus), "-o", str(out)]) == 0
    data = json.loads((out / "compare.json").read_text(encoding="utf-8"))
    assert list(data["results"]) == ["wordpiece-pmi", "wordpiece-likelihood", "wordpiece-frequency"]
    header = capsys.readouterr().out.splitlines()[1].split()
    assert header == ["wordpiece-pmi", "wordpiece-likelihood", "wordpiece-frequency"]  # side by side
    held = len(lines) - round(len(lines) * 0.8)
    assert f"held-out {held:,} lines" in data["setting"]
    for r in data["results"].values():
        assert r["lines"] == held
    vocabs = [(out / "tokenizers" / n / "vocab.txt").read_text(encoding="utf-8") for n in data["results"]]
    assert len(set(vocabs)) == 3  # the scoring option reached the trainer


@pytest.mark.parametrize("case", ["no-dirs", "unknown-algo", "bad-heldout", "output-is-file", "missing-dir"])
def test_compare_bad_input(setup, tmp_path, capsys, case):
    root, corpus, dirs, _ = setup
    afile = tmp_path / "file"
    afile.write_text("x")
    args = {"no-dirs": ["--corpus", str(corpus)],
            "unknown-algo": ["--train", "wordpiece-bigram", str(corpus)],
            "bad-heldout": ["--train", "bpe", "--heldout", "1.5", str(corpus)],
            "output-is-file": [str(dirs["small"]), "--corpus", str(corpus), "-o", str(afile)],
            "missing-dir": [str(tmp_path / "nope"), "--corpus", str(corpus)]}[case]
    assert run(["compare", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tokkit: error:") and len(err.strip().splitlines()) == 1
