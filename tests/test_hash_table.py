"""The compiled code's one hash table (tokkit/_native/hash_table.hpp) and the tables on it, checked
in C++ against std::unordered_map: collisions (every key in one probe run, wrapping past the end),
growth, deletion, the size cap, the hash of short and long keys, the vocabulary's prefix marks, the
bounded memo, the word counter's table and the added-token matcher (tests/hash_table_check.cc)."""
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent
NATIVE = HERE.parent / "tokkit" / "_native"  # the checkout's headers: a wheel ships none
COMPILER = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


@pytest.fixture(scope="module")
def checker(tmp_path_factory) -> Path:
    if COMPILER is None:
        pytest.skip("no C++ compiler to build tests/hash_table_check.cc with")
    exe = tmp_path_factory.mktemp("hash_table") / "hash_table_check"
    cmd = [COMPILER, "-std=c++17", "-O1", "-Wall", f"-I{NATIVE}", str(HERE / "hash_table_check.cc"), "-o", str(exe)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return exe


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_tables_equal_std_unordered_map(checker, seed):
    run = subprocess.run([str(checker), str(seed)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == "ok"
