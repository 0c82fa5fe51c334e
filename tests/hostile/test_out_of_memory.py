"""Memory that runs out in compiled code: one OutOfMemory (a TokkitError and a MemoryError), exit code 2
and one line from the CLI, no abort on std::bad_alloc, and nothing half-built kept.

Each case runs in a child process whose address space is capped a little above what it holds once
its imports and inputs are in place (RLIMIT_AS), so the next big allocation fails there.
"""
import json
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

LINES = [" ".join(w * (1 + i % 3) for w in ("ab", "cd", "ef", "gh", "abc")) for i in range(200)]
ROOT = Path(__file__).resolve().parents[2]  # the child imports this checkout's tokkit
HEADROOM_MB = 150  # what the child may allocate past its size once ready: far less than the big text needs

pytestmark = pytest.mark.skipif(not hasattr(resource, "RLIMIT_AS"), reason="needs RLIMIT_AS")

CAP = """
import resource
def cap():
    with open("/proc/self/status") as f:
        size = next(int(l.split()[1]) for l in f if l.startswith("VmSize:")) * 1024
    limit = size + {headroom} * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
""".format(headroom=HEADROOM_MB)


@pytest.fixture(scope="module")
def unigram_json(tmp_path_factory):
    """A Unigram tokenizer with Metaspace and a normalizer: the general compiled path."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace("  ", " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(LINES, trainers.UnigramTrainer(vocab_size=40, special_tokens=["<unk>"], unk_token="<unk>"))
    path = tmp_path_factory.mktemp("oom") / "tokenizer.json"
    tok.save(str(path))
    return path


def run_child(code: str, *args, timeout: int = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CAP + textwrap.dedent(code), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def test_cli_encode_out_of_memory_is_one_line_and_exit_2(unigram_json, tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("abcdefgh" * 3_000_000 + "\n", encoding="utf-8")  # one 24 MB line without spaces
    out = tmp_path / "ids.txt"
    proc = run_child("""
        import sys
        from tokkit.cli import main
        cap()
        main(["encode", "-q", "--threads", "1", "-t", sys.argv[1], sys.argv[2], "-o", sys.argv[3]])
    """, unigram_json, big, out)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokkit: error: out of memory"), proc.stderr[-2000:]
    assert not out.exists()


def test_api_out_of_memory_is_a_memory_error_and_the_tokenizer_still_answers(unigram_json):
    proc = run_child("""
        import json, sys
        import tokkit
        from tokkit.errors import OutOfMemory, TokkitError
        tok = tokkit.load(sys.argv[1])
        before = tok.encode("ab cd abc gh")
        big = "abcdefgh" * 3_000_000
        cap()
        try:
            tok.encode(big)
            kind = "none"
        except OutOfMemory as exc:
            kind = [isinstance(exc, TokkitError), isinstance(exc, MemoryError), str(exc)]
        print(json.dumps({"kind": kind, "same": tok.encode("ab cd abc gh") == before}))
    """, unigram_json)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout)
    assert got["kind"] != "none", "the capped encode did not run out of memory"
    assert got["kind"][:2] == [True, True] and got["kind"][2].startswith("out of memory")
    assert got["same"]
    assert "Exception ignored" not in proc.stderr


def test_unigram_lattice_loops_raise_rather_than_go_on_half_built():
    """A word whose lattice cannot be built: the compiled E-step and Viterbi counts raise MemoryError
    (they used to print 'Exception ignored' and sum a lattice cut short)."""
    proc = run_child("""
        import json
        import numpy as np
        from tokkit._native import unigram_train as u
        pieces = np.array([97, 98, 97, 98], dtype=np.int32)           # "a", "b", "ab"
        p_off = np.array([0, 1, 2, 4]); scores = np.log([0.25, 0.25, 0.5])
        words = np.tile(np.array([97, 98], dtype=np.int32), 15_000_000)  # one word of 30M chars
        w_off = np.array([0, len(words)]); counts = np.array([1])
        cap()
        got = {}
        for name in ("e_step", "viterbi_counts"):
            try:
                getattr(u, name)(pieces, p_off, scores, words, w_off, counts, unk_score=-20.0)
                got[name] = "returned"
            except MemoryError:
                got[name] = "MemoryError"
        print(json.dumps(got))
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == {"e_step": "MemoryError", "viterbi_counts": "MemoryError"}
    assert "Exception ignored" not in proc.stderr


# ---------------------------------------------------------------------------------------- fast paths
# BERT WordPiece, char BPE and byte-level BPE run in encode.pyx's nogil kernels (not the general path).
# A big input for each: punctuation is one token per character after BERT pre-tokenization, and
# Greek letters that no merge joins are one byte-level token per UTF-8 byte, so the ids (4 bytes
# each) need far more than HEADROOM_MB.
FAST_LINES = [line + " ." for line in LINES] + ["ab, cd; ef! gh? abc."]
SMALL = ["ab cd. abc gh", "ef \u03b1\u03b2 gh.", ""]
BIG = {"wordpiece": (".", 60_000_000), "charbpe": (".", 60_000_000), "bytelevel": (" \u03b1\u03b2\u03b3\u03b4", 6_000_000)}


@pytest.fixture(scope="module")
def fast_json(tmp_path_factory):
    """tokenizer.json files of the three kinds the fast paths run, by name."""
    wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.decoder = decoders.WordPiece()
    wp.train_from_iterator(FAST_LINES, trainers.WordPieceTrainer(vocab_size=60, special_tokens=["[UNK]"]))
    cb = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    cb.normalizer = normalizers.BertNormalizer(lowercase=True)
    cb.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cb.decoder = decoders.BPEDecoder(suffix="</w>")
    cb.train_from_iterator(FAST_LINES, trainers.BpeTrainer(vocab_size=60, special_tokens=["<unk>"],
                                                           end_of_word_suffix="</w>"))
    bl = Tokenizer(models.BPE())
    bl.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bl.decoder = decoders.ByteLevel()
    bl.train_from_iterator(FAST_LINES, trainers.BpeTrainer(vocab_size=300,
                                                           initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    folder = tmp_path_factory.mktemp("oom-fast")
    paths = {}
    for name, tok in (("wordpiece", wp), ("charbpe", cb), ("bytelevel", bl)):
        paths[name] = folder / f"{name}.json"
        tok.save(str(paths[name]))
    return paths


@pytest.mark.parametrize("kind", sorted(BIG))
@pytest.mark.parametrize("api", ["encode", "encode_batch_flat", "encode_to_numpy"])
def test_fast_path_out_of_memory_is_one_error_and_the_tokenizer_still_answers(fast_json, kind, api):
    unit, count = BIG[kind]
    proc = run_child("""
        import json, sys
        import tokkit
        from tokkit.errors import OutOfMemory, TokkitError
        tok = tokkit.load(sys.argv[1])
        api, unit, count = sys.argv[2], sys.argv[3], int(sys.argv[4])
        small = json.loads(sys.argv[5])
        def ids_of(texts):
            if api == "encode":
                return [tok.encode(t) for t in texts]
            if api == "encode_to_numpy":
                return [tok.encode_to_numpy(t).tolist() for t in texts]
            ids, offsets = tok.encode_batch_flat(texts, num_threads=2)
            return [ids[offsets[r]:offsets[r + 1]].tolist() for r in range(len(texts))]
        before = ids_of(small)  # (this also starts the batch's second thread before the cap)
        big = [unit * count] if api != "encode_batch_flat" else [unit * (count // 8)] * 8
        cap()
        try:
            ids_of(big)
            got = "none"
        except OutOfMemory as exc:
            got = [isinstance(exc, TokkitError), isinstance(exc, MemoryError), str(exc)]
        del big
        print(json.dumps({"encoder": type(tok._encoder).__name__, "got": got, "same": ids_of(small) == before}))
    """, fast_json[kind], api, unit, count, json.dumps(SMALL))
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout)
    assert got["encoder"] == "Encoder", got  # the fast path, not the general one
    assert got["got"] != "none", "the capped encode did not run out of memory"
    assert got["got"][:2] == [True, True] and got["got"][2].startswith("out of memory"), got
    assert got["same"]
    assert "Exception ignored" not in proc.stderr, proc.stderr[-2000:]

