"""The benchmark contenders are optional: without them only `tokkit bench` stops, with one line.

Each check runs in a fresh interpreter whose import system refuses the contender libraries (a
meta-path finder placed first), as if they were not installed.
"""
import subprocess
import sys

import pytest

BLOCKED = ("tokenizers", "tiktoken", "tiktoken_ext", "sentencepiece", "transformers", "bpeasy", "psutil")

PRELUDE = f"""
import sys
BLOCKED = {BLOCKED!r}

class Uninstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Uninstalled())
"""

# Runs the tokkit CLI with argv; afterwards, none of the blocked libraries may have been loaded.
CLI = PRELUDE + """
from tokkit.cli import main
try:
    main(sys.argv[1:])
finally:
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    if loaded:
        print("loaded:", loaded, file=sys.stderr)
        sys.exit(3)
"""

# Imports every module of the harness: contenders may only be imported inside its functions.
IMPORT_ALL = PRELUDE + """
import importlib, pkgutil
import tokkit.bench
names = sorted(m.name for m in pkgutil.iter_modules(tokkit.bench.__path__, "tokkit.bench."))
for name in names:
    importlib.import_module(name)
print(len(names))
"""


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-c", CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_the_blocker_blocks():
    p = subprocess.run([sys.executable, "-c", PRELUDE + "import tokenizers"], capture_output=True, text=True)
    assert p.returncode == 1 and "No module named 'tokenizers'" in p.stderr


def test_train_encode_stats_without_contenders_and_bench_says_why(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\nthe dog sat on the log\n" * 200
                      + "a bird in the hand is worth two in the bush\n" * 50, encoding="utf-8")
    tok = tmp_path / "tok"
    p = cli("train", "--algo", "wordpiece", "--vocab-size", "120", "-q", "-o", tok, corpus, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tok / "vocab.txt").exists()
    p = cli("encode", "-t", tok, corpus, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 450 and all(line.split() for line in lines)
    p = cli("stats", "-t", tok, corpus, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "tokens per word" in p.stdout and "bytes per token" in p.stdout
    out = tmp_path / "bench-out"
    p = cli("bench", "--suite", "mask", "-q", "-o", out, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == "tokkit: error: tokkit bench needs psutil to measure memory: pip install 'tokkit[bench]'"
    assert not out.exists()  # it stops before writing anything


def test_harness_modules_import_without_contenders():
    p = subprocess.run([sys.executable, "-c", IMPORT_ALL], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert int(p.stdout) >= 15  # every module of tokkit.bench, not an empty walk


@pytest.mark.parametrize("script", ["bench_bert", "bench_count", "bench_dask", "bench_engine", "bench_mask",
                                    "bench_train", "run_all"])
def test_benchmark_scripts_parse_their_options(script):
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / f"{script}.py"
    p = subprocess.run([sys.executable, str(path), "--help"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage:")
