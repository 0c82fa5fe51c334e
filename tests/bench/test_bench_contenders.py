"""The one place contenders are built: a missing one is a skip line, never a traceback; builders agree with tokkit."""
import subprocess
import sys

import pytest

from tokkit.bench import contenders
from tokkit.bench.contenders import build, missing, require, skip_note, split_installed


def test_a_missing_contender_is_one_skip_line(monkeypatch, capsys):
    monkeypatch.setitem(contenders.MODULES, "tiktoken", "no_such_module_xyz")
    assert build("tiktoken", ".") is None
    assert capsys.readouterr().out == "tiktoken: skipped: no_such_module_xyz is not installed\n"
    log = []
    runnable, notes = split_installed({"ok": (None, "setup", {}), "gone": ("no_such_module_xyz", "setup", {})},
                                      log=log.append)
    assert runnable == {"ok": ("setup", {})} and notes == {"gone": "skipped: no_such_module_xyz is not installed"}
    assert log == ["gone: skipped: no_such_module_xyz is not installed"]


def test_versions_too_old_are_named():
    assert missing("json") is None and skip_note(None) is None
    assert "this contender is pytest >= 999" in missing("pytest>=999.0")


def test_require_stops_a_script_in_one_line():
    with pytest.raises(SystemExit, match="^no_such_module_xyz is not installed: this benchmark needs it$"):
        require("no_such_module_xyz")
    code = "from tokkit.bench.contenders import require; require('no_such_module_xyz')"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 1 and res.stderr.strip().splitlines() == [
        "no_such_module_xyz is not installed: this benchmark needs it"]


def test_importing_the_bench_package_imports_no_contender():
    code = ("import sys, tokkit.bench.contenders, tokkit.bench.registry, tokkit.bench.timing; "
            "print(sorted(m for m in ('tokenizers', 'tiktoken', 'sentencepiece', 'transformers') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def bytelevel(tmp_path_factory):
    import tokkit

    folder = tmp_path_factory.mktemp("bl")
    text = ["the cat sat on the mat", "a dog ate the hat"] * 50
    tokkit.train(texts=text, algo="bytelevel", vocab_size=300).save(folder)
    return folder


def test_tiktoken_and_tokenizers_built_here_give_tokkits_ids(bytelevel):
    import tokkit

    text = "the cat ate the dog's hat"
    want = tokkit.load(bytelevel).encode(text)
    assert build("tiktoken", str(bytelevel)).encode_ordinary(text) == want
    assert build("tokenizers", str(bytelevel)).encode(text, add_special_tokens=False).ids == want
