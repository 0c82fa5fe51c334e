"""Odd values (0, negative, nan, inf, huge) are refused with one error, before any work, and values
that only size a table cost memory in proportion to the input, not to the value."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tokkit
from tokkit.errors import TokkitError
from tokkit.text.corpus import parse_size

from .conftest import one_error_line

HUGE = "9" * 20  # above 2**63
FLOAT_OVERFLOW = "9" * 400  # float("9" * 400) is inf
T = ["-t", "TOK"]  # the tokenizer folder, filled in by the test

ODD_VALUES = [
    # train: int64/int32 bounds, checked before the corpus is read
    (["train", "missing.txt", "--vocab-size", "2147483648"], "--vocab-size"),
    (["train", "missing.txt", "--vocab-size", HUGE], "--vocab-size"),
    (["train", "missing.txt", "--min-frequency", HUGE], "--min-frequency"),
    (["train", "missing.txt", "--min-word-count", HUGE, "--scheduler", "local"], "--min-word-count"),
    (["train", "missing.txt", "--limit-alphabet", "0"], "--limit-alphabet"),
    (["train", "missing.txt", "--workers", "-3"], "--workers"),
    (["train", "missing.txt", "--special-token", "x" * 1001], "at most 1,000"),
    # encode / decode
    (["encode", *T, "missing.txt", "--pretraining", "full", "-o", "shards", "--max-length", "2147483648"],
     "padded"),
    (["encode", *T, "missing.txt", "--format", "npz", "-o", "x.npz", "--max-length", "2000000"], "padded"),
    (["encode", *T, "missing.txt", "--max-line-bytes", HUGE], "--max-line-bytes"),
    (["encode", *T, "missing.txt", "--max-line-bytes", "9223372036854775807"], "--max-line-bytes"),
    (["decode", *T, "missing.txt", "--max-line-bytes", "9223372036854775807"], "--max-line-bytes"),
    # stats
    (["stats", *T, "missing.txt", "--size", FLOAT_OVERFLOW], "too large"),
    (["stats", *T, "missing.txt", "--size", "inf"], "--size"),
    (["stats", *T, "missing.txt", "--top", "-1"], "--top"),
    (["stats", *T, "missing.txt", "--threads", "0"], "--threads"),
    # compare: --top -1 used to be accepted silently, --vocab-size 0 refused only after reading
    (["compare", "TOK", "TOK", "--corpus", "missing.txt", "--top", "-1"], "--top"),
    (["compare", "TOK", "--corpus", "missing.txt", "--threads", "0"], "--threads"),
    (["compare", "--train", "wordpiece", "missing.txt", "--vocab-size", "0"], "--vocab-size"),
    (["compare", "--train", "wordpiece", "missing.txt", "--vocab-size", "2147483648"], "--vocab-size"),
    (["compare", "--train", "wordpiece", "missing.txt", "--min-frequency", HUGE], "--min-frequency"),
    (["compare", "--train", "wordpiece", "missing.txt", "--heldout", "nan"], "--heldout"),
    (["compare", "--train", "wordpiece", "missing.txt", "--heldout", "inf"], "--heldout"),
    (["compare", "--train", "wordpiece", "missing.txt", "--size", FLOAT_OVERFLOW], "too large"),
    # bench: refused before psutil, the corpus or any contender is looked at
    (["bench", "--corpus", "missing.txt", "--threads", str(10**6)], "cores"),
    (["bench", "--corpus", "missing.txt", "--threads", "0"], "--threads"),
    (["bench", "--corpus", "missing.txt", "--repeat", "0"], "--repeat"),
    (["bench", "--corpus", "missing.txt", "--vocab-size", "0"], "--vocab-size"),
    (["bench", "--corpus", "missing.txt", "--vocab-size", "2147483648"], "--vocab-size"),
    (["bench", "--corpus", "missing.txt", "--size", FLOAT_OVERFLOW], "too large"),
]


@pytest.mark.parametrize("args, name", ODD_VALUES)
def test_odd_option_values_are_one_error_line_before_any_work(wp_dir, cli, tmp_path, monkeypatch, args, name):
    """The corpus does not exist: the option must be refused before it is looked for."""
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(*[str(wp_dir) if a == "TOK" else a for a in args])
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert name in line and "missing.txt" not in line
    assert os.listdir(tmp_path) == []


def test_the_cli_turns_no_value_into_a_traceback_in_a_process(wp_dir, tmp_path):
    """The same through `python -m tokkit`: a traceback would show as exit code 1."""
    for args in (["train", "missing.txt", "--min-frequency", HUGE],
                 ["stats", "-t", str(wp_dir), "--size", FLOAT_OVERFLOW]):
        proc = subprocess.run([sys.executable, "-m", "tokkit", *args], cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        one_error_line(proc.stderr)


def test_a_max_length_past_int64_truncates_nothing(wp, wp_dir, cli, tmp_path):
    """Without padding a huge max_length means no truncation (it used to overflow numpy's int64)."""
    rows = tokkit.encode(wp, ["the cat sat"], max_length=10**20, truncation="longest_first", padding=None)
    ids = rows["input_ids"][0].tolist()
    assert ids == [wp.token_to_id("[CLS]"), *wp.encode("the cat sat"), wp.token_to_id("[SEP]")]
    (tmp_path / "in.txt").write_text("the cat sat\n")
    code, out, err = cli("encode", "-t", str(wp_dir), str(tmp_path / "in.txt"), "--template", "--max-length", HUGE)
    assert code == 0 and out.split() == [str(i) for i in ids], err


def test_api_values_are_tokkit_errors():
    for option in ({"vocab_size": 2**31}, {"min_frequency": 10**20}, {"min_word_count": 2**63}):
        with pytest.raises(TokkitError, match=next(iter(option))):
            tokkit.train("no/such/corpus.txt", algo="wordpiece", **option)
    with pytest.raises(TokkitError, match="too large"):
        parse_size(FLOAT_OVERFLOW)


def test_huge_num_threads_is_capped_not_refused(wp):
    texts = ["the cat sat"] * 50
    assert wp.encode_batch(texts, num_threads=10**12) == [wp.encode(t) for t in texts]


# --------------------------------------------------------------------------- mask_tokens

MASK_IN_LIMITED_MEMORY = textwrap.dedent("""
    import resource, sys
    import numpy as np
    limit = 1 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from tokkit.errors import TokkitError
    from tokkit.inputs.masking import mask_tokens
    vocab = int(sys.argv[1])
    special = [0, 1, 2, 3, 4, 5, 2**30, vocab - 2, vocab - 1]  # at the start, in the middle, at the end
    ids = np.full((64, 64), 7, dtype=np.int64)
    try:
        masked, labels = mask_tokens(ids, np.zeros_like(ids), vocab_size=vocab, mask_token_id=4,
                                     special_ids=special, rng=np.random.default_rng(3), mlm_probability=1.0,
                                     mask_replace_prob=0.0, random_replace_prob=1.0)
    except TokkitError as exc:
        print("refused:", exc)
        sys.exit(0)
    assert (labels == 7).all()
    assert not np.isin(masked, special).any() and masked.min() >= 0 and masked.max() < vocab
    assert len(np.unique(masked)) > 4000  # drawn over the whole range, not from a few ids
    print("ok")
""")


@pytest.mark.parametrize("pure", ["0", "1"])
@pytest.mark.parametrize("vocab, expected", [(2**31 - 1, "ok"), (2**31, "refused: vocab_size"),
                                             (10**12, "refused: vocab_size")])
def test_mask_tokens_memory_does_not_grow_with_vocab_size(pure, vocab, expected, tmp_path):
    """A vocabulary of 2**31 - 1 ids masks within a 1 GiB address space (it used to build tables
    of vocab_size bytes and 8 * vocab_size bytes), with the kernel and with its numpy twin, and
    random replacements skip special ids wherever they lie; a larger vocabulary is refused. Run in
    a child process with limited memory, so that a regression cannot exhaust the machine's."""
    script = tmp_path / "mask.py"
    script.write_text(MASK_IN_LIMITED_MEMORY)
    env = {**os.environ, "TOKKIT_PURE_PYTHON": pure, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(script), str(vocab)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith(expected), proc.stderr[-2000:]


@pytest.mark.parametrize("kwargs, message", [
    ({"vocab_size": 0}, "vocab_size"),
    ({"vocab_size": 300.5}, "vocab_size"),
    ({"mask_token_id": 4.5}, "mask_token_id"),
    ({"special_ids": [0, 1.5]}, "special_ids"),
    ({"special_ids": [0, 10**30]}, "special_ids"),
    ({"mask_token_id": -(10**30)}, "mask_token_id"),
    ({"mlm_probability": float("nan")}, "mlm_probability"),
    ({"random_replace_prob": float("inf")}, "random_replace_prob"),
])
def test_mask_tokens_refuses_odd_values(kwargs, message):
    ids = np.array([[2, 7, 8, 3]])
    args = {"vocab_size": 10, "mask_token_id": 4, "special_ids": [0, 2, 3, 4], "rng": np.random.default_rng(0),
            **kwargs}
    with pytest.raises(TokkitError, match=message):
        tokkit.mask_tokens(ids, np.zeros_like(ids), **args)


def test_mask_tokens_refuses_word_ids_that_are_not_integers():
    ids = np.array([[2, 7, 8, 3]])
    with pytest.raises(TokkitError, match="word_ids must hold integers"):
        tokkit.mask_tokens(ids, np.zeros_like(ids), vocab_size=10, mask_token_id=4, special_ids=[4],
                           rng=np.random.default_rng(0), word_ids=np.array([[0.5, 1.5, 1.7, 3.0]]))


def test_mask_tokens_refuses_ids_too_narrow_for_the_vocabulary():
    """int16 ids cannot hold a random replacement drawn from 40,000 ids: refused, not wrapped."""
    ids = np.array([[2, 7, 8, 3]], dtype=np.int16)
    with pytest.raises(TokkitError, match="int16"):
        tokkit.mask_tokens(ids, np.zeros_like(ids), vocab_size=40_000, mask_token_id=4, special_ids=[4],
                           rng=np.random.default_rng(0))


# --------------------------------------------------------------------------- vocab.txt

def _vocab_dir(tmp_path, long_token):
    folder = tmp_path / "vocab"
    folder.mkdir()
    (folder / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n" + long_token + "\n")
    return folder


def test_a_token_past_the_limit_is_refused_at_load(tmp_path, cli):
    """One token of 20,000 characters used to cost half a gigabyte of prefix tables on the first encode
    (50,000: over three)."""
    from tokkit.tokenizer.files import MAX_TOKEN_CHARS

    folder = _vocab_dir(tmp_path, "b" * 20_000)
    with pytest.raises(TokkitError, match=r"vocab.txt: line 7: token of 20,000 characters"):
        tokkit.load(folder)
    (tmp_path / "in.txt").write_text("a b\n")
    code, out, err = cli("encode", "-t", str(folder), str(tmp_path / "in.txt"))
    assert code == 2 and out == "" and "line 7" in one_error_line(err)
    assert MAX_TOKEN_CHARS == 1000


def test_a_token_at_the_limit_loads_and_encodes(tmp_path):
    tok = tokkit.load(_vocab_dir(tmp_path, "b" * 1000))
    assert tok.token_to_id("b" * 1000) == 6
    assert tok.encode("a a") == [5, 5]  # the first encode builds the prefix tables
