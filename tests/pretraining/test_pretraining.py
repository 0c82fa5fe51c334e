"""tokkit.pretraining: documents, NSP and full-sentence examples, sharing out, the masking collator."""
import bz2
import gzip
import itertools
import lzma
import pickle
import subprocess
import sys

import numpy as np
import pytest
from helpers.pretraining import WORDS, train_tokenizer, write_corpus  # noqa: F401

from tokkit.errors import TokkitError
from tokkit.pretraining import MaskingCollator, PretrainingDataset, iter_documents, iter_examples
from tokkit.pretraining import documents as pretraining_docs

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


class HFTokenizer:
    """Test-only adapter: a `tokenizers` WordPiece tokenizer behind tokkit's tokenizer protocol."""

    def __init__(self, tok, specials=SPECIALS):
        self.tok = tok
        self.special_tokens = [s for s in specials if tok.token_to_id(s) is not None]

    @property
    def vocab_size(self):
        return self.tok.get_vocab_size()

    def encode(self, text):
        return self.tok.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts, num_threads=None):
        return [e.ids for e in self.tok.encode_batch(list(texts), add_special_tokens=False)]

    def token_to_id(self, token):
        return self.tok.token_to_id(token)

    def id_to_token(self, i):
        return self.tok.id_to_token(i)


def hf_tokenizer(lines, vocab_size=400, specials=SPECIALS):
    """A `tokenizers` WordPiece behind the protocol: the datasets need no tokkit.Tokenizer."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials))
    return HFTokenizer(tok, specials)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    return write_corpus(folder, docs=300)


@pytest.fixture(scope="module")
def tok(corpus):
    return train_tokenizer(corpus.read_text().splitlines())


def doc_streams(tok, corpus):
    """Each document's token stream (its sentences' tokens, in order) as a string of ids."""
    docs = pretraining_docs.document_sentences(iter_documents(corpus))
    return [" " + " ".join(str(t) for s in doc for t in tok.encode(s)) + " " for doc in docs]


def as_text(ids):
    return " " + " ".join(str(int(t)) for t in ids) + " "


# ------------------------------------------------------------------------------ documents
def test_document_boundaries_titles_and_files(tmp_path):
    (tmp_path / "a.txt").write_text("Title\n\nFirst para.\nSecond para.\n\n\n\nLone line at the end\n")
    (tmp_path / "b.txt").write_text("Head\n\nSub head\n\nBody one.\nBody two.\n\nx\ny\n")
    docs = list(iter_documents([tmp_path / "a.txt", tmp_path / "b.txt"]))
    assert docs == [["Title", "First para.", "Second para."], ["Lone line at the end"],
                    ["Head", "Sub head", "Body one.", "Body two."], ["x", "y"]]
    assert list(iter_documents(tmp_path)) == docs  # a folder is its sorted files


@pytest.mark.parametrize("suffix, opener", [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)])
def test_compressed_files_give_the_same_documents(tmp_path, corpus, suffix, opener):
    packed = tmp_path / f"corpus.txt{suffix}"
    with opener(packed, "wt", encoding="utf-8") as f:
        f.write(corpus.read_text(encoding="utf-8"))
    assert list(iter_documents(packed)) == list(iter_documents(corpus))


def test_long_blockless_text_is_cut_into_bounded_documents(tmp_path, monkeypatch):
    monkeypatch.setattr(pretraining_docs, "MAX_DOCUMENT_CHARS", 1000)
    (tmp_path / "flat.txt").write_text("".join(f"line number {i} of a file without blank lines\n" for i in range(500)))
    docs = list(iter_documents(tmp_path / "flat.txt"))
    assert len(docs) > 10
    assert all(sum(map(len, d)) < 1000 + 60 for d in docs)
    assert sum(len(d) for d in docs) == 500


def test_unreadable_inputs(tmp_path):
    with pytest.raises(TokkitError, match="no such file"):
        list(iter_documents(tmp_path / "missing.txt"))
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\xfe bad bytes\n")
    with pytest.raises(TokkitError, match="not UTF-8"):
        list(iter_documents(tmp_path / "bad.txt"))


@pytest.mark.corpus
def test_wikipedia_titles_open_their_articles(corpus_dir):
    docs = list(itertools.islice(iter_documents(corpus_dir / "en" / "wiki" / "000.txt"), 30))
    assert len(docs) == 30
    for doc in docs:  # a short title line, then the article's paragraphs
        assert len(doc) >= 2 and len(doc[0]) < 100 and len(doc[0]) < max(len(line) for line in doc[1:])


# ------------------------------------------------------------------------------ NSP
def test_nsp_labels_are_balanced_and_true_continuations_follow(tok, corpus):
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    streams = doc_streams(tok, corpus)
    examples = list(iter_examples(tok, [corpus], kind="nsp", max_length=48, seed=3))
    labels = np.array([int(e["next_sentence_label"]) for e in examples])
    assert len(examples) > 500
    assert abs(labels.mean() - 0.5) < 0.05
    for e in examples:
        ids = e["input_ids"]
        assert len(ids) <= 48 and ids[0] == cls and ids[-1] == sep
        seps = np.flatnonzero(ids == sep)
        assert len(seps) == 2
        a, b = ids[1:seps[0]], ids[seps[0] + 1:-1]
        assert len(a) and len(b)
        assert np.array_equal(e["token_type_ids"], (np.arange(len(ids)) > seps[0]).astype(np.int8))
        assert np.array_equal(np.flatnonzero(e["special_tokens_mask"]), [0, seps[0], len(ids) - 1])
        homes = [d for d, s in enumerate(streams) if as_text(a) in s]
        assert homes, "segment A is not a run of some document"
        follows = any(s.find(as_text(b), s.find(as_text(a)) + len(as_text(a)) - 1) >= 0 for s in
                      (streams[d] for d in homes))
        if e["next_sentence_label"] == 0:
            assert follows, "label 0 but B does not follow A"
        else:
            assert any(as_text(b) in s for d, s in enumerate(streams) if d not in homes), \
                "label 1 but B comes from no other document"


def test_any_tokenizer_with_the_protocol_will_do(corpus):
    hf = hf_tokenizer(corpus.read_text().splitlines())
    examples = list(itertools.islice(iter_examples(hf, [corpus], kind="nsp", max_length=32), 50))
    assert len(examples) == 50
    batch = MaskingCollator(hf, whole_word=True)(examples)
    assert batch["input_ids"].shape[0] == 50 and (batch["labels"] != -100).any()


def test_nsp_is_deterministic_for_a_seed(tok, corpus):
    first = list(iter_examples(tok, [corpus], kind="nsp", max_length=32, seed=1))
    again = list(iter_examples(tok, [corpus], kind="nsp", max_length=32, seed=1))
    other = list(iter_examples(tok, [corpus], kind="nsp", max_length=32, seed=2))
    assert [e["input_ids"].tolist() for e in first] == [e["input_ids"].tolist() for e in again]
    assert [e["input_ids"].tolist() for e in first] != [e["input_ids"].tolist() for e in other]


# ------------------------------------------------------------------------------ full sentences
def test_full_blocks_are_packed_across_documents(tok, corpus, monkeypatch):
    monkeypatch.setattr(pretraining_docs, "GROUP_DOCUMENTS", 10**6)  # one group: no overlap between groups
    monkeypatch.setattr(pretraining_docs, "GROUP_CHARS", 10**9)
    sep = tok.token_to_id("[SEP]")
    examples = list(iter_examples(tok, [corpus], kind="full", max_length=40))
    assert all(len(e["input_ids"]) == 40 for e in examples[:-1]) and len(examples[-1]["input_ids"]) <= 40
    assert "next_sentence_label" not in examples[0]
    # The contents, joined back, are the documents' tokens with one [SEP] between documents.
    docs = [[t for line in doc for t in tok.encode(line)] for doc in iter_documents(corpus)]
    expected = [t for d, doc in enumerate(docs) for t in ([sep] if d else []) + doc]
    content = [t for e in examples for t in e["input_ids"][1:-1].tolist()]
    assert len(expected) - len(examples) <= len(content) <= len(expected)  # only block-opening [SEP]s go
    assert [t for t in content if t != sep] == [t for t in expected if t != sep]
    inner = [e for e in examples if (e["input_ids"][1:-1] == sep).any()]
    assert inner and all(e["special_tokens_mask"][np.flatnonzero(e["input_ids"] == sep)].all() for e in inner)


@pytest.mark.parametrize("kind", ["full", "nsp"])
def test_shares_partition_the_examples_whatever_their_number(tmp_path, tok, kind, monkeypatch):
    monkeypatch.setattr(pretraining_docs, "GROUP_DOCUMENTS", 8)  # several groups in a small corpus
    path = write_corpus(tmp_path, docs=100, seed=5)
    whole = {int(e["index"]): e for e in iter_examples(tok, [path], kind=kind, max_length=40)}
    parts = [list(iter_examples(tok, [path], kind=kind, max_length=40, share=s, shares=3)) for s in range(3)]
    seen = [int(e["index"]) for part in parts for e in part]
    assert len(seen) == len(set(seen)) == len(whole)
    for part in parts:
        assert part
        for e in part:
            assert np.array_equal(e["input_ids"], whole[int(e["index"])]["input_ids"])
        if kind == "full":  # only the corpus' last block may be short
            assert all(len(e["input_ids"]) == 40 for e in part[:-1])
    if kind == "full":
        assert sum(len(e["input_ids"]) < 40 for part in parts for e in part) <= 1


# ------------------------------------------------------------------------------ collator
def test_collator_pads_and_masks_each_example_by_seed_epoch_index(tok, corpus):
    examples = list(itertools.islice(iter_examples(tok, [corpus], kind="nsp", max_length=48), 64))
    collate = MaskingCollator(tok, seed=11, pad_to_multiple_of=16)
    batch = collate(examples)
    width = max(len(e["input_ids"]) for e in examples)
    assert batch["input_ids"].shape == (64, -(-width // 16) * 16)
    assert set(batch) == {"input_ids", "token_type_ids", "attention_mask", "labels", "next_sentence_label", "index"}
    assert np.array_equal(batch["attention_mask"].sum(1), [len(e["input_ids"]) for e in examples])
    assert (batch["labels"][batch["attention_mask"] == 0] == -100).all()
    assert (batch["input_ids"][batch["attention_mask"] == 0] == tok.token_to_id("[PAD]")).all()
    special_ids = [tok.token_to_id(t) for t in SPECIALS]
    import tokkit

    for r, e in enumerate(examples):  # each row is mask_tokens on the example alone
        k = len(e["input_ids"])
        masked, labels = tokkit.mask_tokens(e["input_ids"][None].astype(np.int64), e["special_tokens_mask"][None],
                                            vocab_size=tok.vocab_size, mask_token_id=tok.token_to_id("[MASK]"),
                                            special_ids=special_ids, rng=np.random.default_rng([11, 0, int(e["index"])]))
        assert np.array_equal(batch["input_ids"][r, :k], masked[0]) and np.array_equal(batch["labels"][r, :k], labels[0])
    shuffled = collate(examples[::-1])
    assert np.array_equal(shuffled["labels"][::-1][:, :width], batch["labels"][:, :width])
    assert (batch["labels"] != -100).any()
    collate.set_epoch(1)
    assert not np.array_equal(collate(examples)["labels"], batch["labels"])


def test_collator_returns_torch_tensors_when_asked(tok, corpus):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    examples = list(itertools.islice(iter_examples(tok, [corpus], kind="full", max_length=32), 4))
    batch = MaskingCollator(tok, return_tensors="pt")(examples)
    assert all(isinstance(v, torch.Tensor) and v.dtype == torch.int64 for v in batch.values())


class Vocab:
    """A fixed vocabulary behind the tokenizer protocol, for the three word conventions."""

    def __init__(self, tokens, kind=None):
        self.tokens = SPECIALS + tokens
        self.special_tokens = SPECIALS
        self.vocab_size = len(self.tokens)
        if kind:
            self.kind = kind

    def token_to_id(self, t):
        return self.tokens.index(t) if t in self.tokens else None

    def id_to_token(self, i):
        return self.tokens[i]


@pytest.mark.parametrize("tokens, kind", [
    (["un", "##believ", "##able", "cat", "##s"], "wordpiece"),
    (["un", "believ", "able</w>", "cat", "s</w>"], "bpe"),
    (["\u0120un", "believ", "able", "\u0120cat", "s"], "bytelevel"),
    (["un", "##believ", "##able", "cat", "##s"], None),
])
def test_whole_word_collator_never_splits_a_word(tokens, kind):
    tok = Vocab(tokens, kind)
    ids = [2] + [5, 6, 7, 8, 9] * 20 + [3]
    examples = [{"input_ids": np.array(ids), "special_tokens_mask": np.array([1] + [0] * 100 + [1]),
                 "index": i} for i in range(400)]
    batch = MaskingCollator(tok, whole_word=True, mlm_probability=0.3)(examples)
    chosen = batch["labels"][:, 1:-1].reshape(400, 20, 5) != -100
    unbelievable, cats = chosen[:, :, :3], chosen[:, :, 3:]
    assert (unbelievable.all(-1) | ~unbelievable.any(-1)).all()
    assert (cats.all(-1) | ~cats.any(-1)).all()
    assert abs(chosen[:, :, [0, 3]].mean() - 0.3) < 0.03


# ------------------------------------------------------------------------------ datasets
@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_dataloader_gives_each_example_the_same_mask_with_1_and_3_workers(tmp_path, tok, monkeypatch):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    monkeypatch.setattr(pretraining_docs, "GROUP_DOCUMENTS", 8)
    path = write_corpus(tmp_path, docs=60, seed=9)
    results = {}
    for workers in (1, 3):
        ds = PretrainingDataset(tok, [path], kind="full", max_length=32, seed=4)
        collate = MaskingCollator(tok, seed=4)
        collate.set_epoch(2)
        loader = torch.utils.data.DataLoader(ds.as_torch_dataset(), batch_size=8, num_workers=workers,
                                             collate_fn=collate, multiprocessing_context="fork")
        rows = {}
        for batch in loader:
            for r, i in enumerate(batch["index"].tolist()):
                assert i not in rows, "an example was read twice"
                rows[i] = (batch["input_ids"][r].tolist(), batch["labels"][r].tolist())
        results[workers] = rows
    assert results[1] == results[3] and len(results[1]) > 50


def test_dataset_pickles_and_splits_by_rank(tok, corpus):
    ds = PretrainingDataset(tok, [corpus], kind="nsp", max_length=32, seed=2)
    clone = pickle.loads(pickle.dumps(ds))
    assert [e["index"] for e in clone] == [e["index"] for e in ds]
    ranks = [PretrainingDataset(tok, [corpus], kind="nsp", max_length=32, seed=2, rank=r, world_size=2)
             for r in range(2)]
    by_rank = [{int(e["index"]) for e in r} for r in ranks]
    assert not by_rank[0] & by_rank[1] and by_rank[0] | by_rank[1] == {int(e["index"]) for e in ds}


# ------------------------------------------------------------------------------ shuffled streams
def windows_min_documents(examples, width=32):
    """The fewest distinct documents among any `width` consecutive examples."""
    docs = [int(e["document"]) for e in examples]
    return min(len(set(docs[i:i + width])) for i in range(len(docs) - width + 1))


def first_seen(examples):
    """Documents in the order the stream first reaches them."""
    return list(dict.fromkeys(int(e["document"]) for e in examples))


@pytest.fixture(scope="module")
def three_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("three")
    return [write_corpus(folder, docs=80, seed=s, name=f"part{s}.txt") for s in range(3)]


def file_of_documents(paths):
    """The file number of each document, in corpus order."""
    return [f for f, path in enumerate(paths) for _ in iter_documents(path)]


@pytest.mark.parametrize("kind", ["full", "nsp"])
def test_any_32_consecutive_examples_come_from_at_least_24_documents(tok, three_files, kind):
    ds = PretrainingDataset(tok, three_files, kind=kind, max_length=32, seed=0)
    examples = list(ds)
    assert len(first_seen(examples)) == len(file_of_documents(three_files)) > 150 and len(examples) > 500
    assert windows_min_documents(examples) >= 24
    ordered = list(PretrainingDataset(tok, three_files, kind=kind, max_length=32, seed=0, shuffle=False))
    assert windows_min_documents(ordered) < 10  # what file order gives


def test_documents_come_in_a_new_seeded_order_each_epoch_across_all_files(tok, three_files):
    ds = PretrainingDataset(tok, three_files, kind="full", max_length=32, seed=1, buffer_size=0)  # no buffer
    orders = []
    for epoch in (0, 1, 0):
        ds.set_epoch(epoch)
        orders.append(first_seen(ds))
    files = file_of_documents(three_files)
    assert orders[0] == orders[2] != orders[1]
    assert sorted(orders[0]) == sorted(orders[1]) == list(range(len(files)))
    assert orders[0] != sorted(orders[0])
    assert {files[d] for d in orders[0][:12]} == {0, 1, 2}  # the first documents come from every file
    assert first_seen(PretrainingDataset(tok, three_files, kind="full", max_length=32, seed=2, buffer_size=0)) \
        != orders[0]


def test_compressed_files_keep_their_order_interleaved_among_the_others(tok, three_files, tmp_path):
    from tokkit.pretraining.corpus_index import DocumentIndex, epoch_order, iter_order

    packed = tmp_path / "part0.txt.gz"
    with gzip.open(packed, "wt", encoding="utf-8") as f:
        f.write(three_files[0].read_text(encoding="utf-8"))
    paths = [packed, *three_files[1:]]
    index = DocumentIndex.build(paths)
    order = epoch_order(index, seed=0, epoch=0).tolist()
    files = file_of_documents(paths)
    from_gz = [d for d in order if files[d] == 0]
    assert from_gz == sorted(from_gz)  # a compressed file is read front to back
    positions = [k for k, d in enumerate(order) if files[d] == 0]
    assert positions[-1] - positions[0] > len(order) // 2  # ... spread over the epoch
    assert sorted(map(tuple, iter_order(index, np.asarray(order)))) == sorted(map(tuple, iter_documents(paths)))
    examples = list(PretrainingDataset(tok, paths, kind="full", max_length=32, seed=0))
    assert windows_min_documents(examples) >= 24


def test_shuffle_false_keeps_the_file_order(tok, three_files):
    ds = PretrainingDataset(tok, three_files, kind="full", max_length=32, seed=0, shuffle=False)
    streamed = list(iter_examples(tok, three_files, kind="full", max_length=32, seed=0))
    assert [e["input_ids"].tolist() for e in ds] == [e["input_ids"].tolist() for e in streamed]
    assert first_seen(streamed) == list(range(len(file_of_documents(three_files))))


@pytest.mark.parametrize("kind", ["full", "nsp"])
def test_shuffled_shares_take_disjoint_parts_and_lose_nothing(tok, three_files, kind, monkeypatch):
    monkeypatch.setattr(pretraining_docs, "GROUP_DOCUMENTS", 8)  # several groups for every share
    whole = {int(e["index"]): e for e in PretrainingDataset(tok, three_files, kind=kind, max_length=32, seed=3)}
    for shares in (2, 3):
        parts = [list(PretrainingDataset(tok, three_files, kind=kind, max_length=32, seed=3, rank=r,
                                         world_size=shares)) for r in range(shares)]
        seen = [int(e["index"]) for part in parts for e in part]
        assert len(seen) == len(set(seen)) == len(whole)
        for part in parts:
            assert part and all(np.array_equal(e["input_ids"], whole[int(e["index"])]["input_ids"]) for e in part)
    if kind == "full":  # every token of every document (a group's last block also takes a few of the next's)
        from collections import Counter

        content = Counter(t for e in whole.values() for t in e["input_ids"][1:-1].tolist())
        text = Counter(t for path in three_files for doc in iter_documents(path) for line in doc
                       for t in tok.encode(line))
        content.pop(tok.token_to_id("[SEP]"), None)
        assert not text - content
        groups = len({int(i) >> 32 for i in whole})
        assert sum((content - text).values()) < groups * 32


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_dataloader_workers_split_the_shuffled_stream(tok, three_files, monkeypatch):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    monkeypatch.setattr(pretraining_docs, "GROUP_DOCUMENTS", 8)
    ds = PretrainingDataset(tok, three_files, kind="full", max_length=32, seed=4)
    ds.set_epoch(1)
    want = {int(e["index"]) for e in ds}
    loader = torch.utils.data.DataLoader(ds.as_torch_dataset(), batch_size=32, num_workers=2,
                                         collate_fn=MaskingCollator(tok, seed=4), multiprocessing_context="fork")
    got = [int(i) for batch in loader for i in batch["index"]]
    assert len(got) == len(set(got)) and set(got) == want


def test_a_stream_resumed_at_a_position_gives_the_same_batches(tok, three_files):
    from tokkit.bert.data import BatchStream

    pytest.importorskip("torch", reason="torch is not installed")

    def stream():
        ds = PretrainingDataset(tok, three_files, kind="full", max_length=32, seed=6, buffer_size=256)
        return BatchStream(ds, MaskingCollator(tok, seed=6, return_tensors="pt"), 64)

    first = stream()
    batches, positions = [], []
    for _ in range(40):  # past the end of the first epoch
        positions.append(first.position)
        batches.append(next(first))
    second_epoch = next(k for k, p in enumerate(positions) if p["epoch"] == 1)
    for k in (5, second_epoch + 2):
        again = stream()
        again.seek(positions[k])
        for want in batches[k:k + 4]:
            got = next(again)
            assert all(np.array_equal(got[key].numpy(), want[key].numpy()) for key in want)


@pytest.mark.corpus
def test_wikipedia_batches_draw_on_many_articles(corpus_dir):
    files = [corpus_dir / "en" / "wiki" / f"{i:03d}.txt" for i in range(5)]
    lines = [line for f in files[:1] for line in f.read_text(encoding="utf-8").splitlines()]
    wiki_tok = train_tokenizer(lines, vocab_size=2000)
    examples = list(PretrainingDataset(wiki_tok, files, kind="full", max_length=128, seed=0))
    assert len(set(int(e["document"]) for e in examples[:32])) >= 30  # file order: 1 article
    assert windows_min_documents(examples) >= 24


def test_bad_settings_and_tokenizers(tok, corpus):
    no_mask = train_tokenizer(corpus.read_text().splitlines(), specials=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    with pytest.raises(ValueError, match=r"\[MASK\]"):
        PretrainingDataset(no_mask, [corpus], kind="full")
    with pytest.raises(ValueError, match=r"\[MASK\]"):
        MaskingCollator(no_mask)
    with pytest.raises(ValueError, match="kind"):
        PretrainingDataset(tok, [corpus], kind="sop")
    with pytest.raises(ValueError, match="max_length"):
        PretrainingDataset(tok, [corpus], kind="nsp", max_length=4)
    with pytest.raises(ValueError, match="rank"):
        PretrainingDataset(tok, [corpus], kind="nsp", rank=2, world_size=2)
    with pytest.raises(ValueError, match="buffer_size"):
        PretrainingDataset(tok, [corpus], kind="nsp", buffer_size=-1)
    with pytest.raises(ValueError, match="return_tensors"):
        MaskingCollator(tok, return_tensors="tf")
    with pytest.raises(ValueError, match="mlm_probability"):
        MaskingCollator(tok, mlm_probability=2)
    with pytest.raises(ValueError, match="index"):
        MaskingCollator(tok)([{"input_ids": np.array([2, 3])}])


def test_importing_pretraining_does_not_import_torch():
    code = ("import sys, tokkit, tokkit.pretraining, tokkit.pretraining.shards, tokkit.inputs.masking; "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
