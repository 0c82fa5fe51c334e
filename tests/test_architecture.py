"""The import rule holds, and docs/architecture.md shows the graph the code has today."""
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept():
    """lint-imports checks the layer order and that only `tokkit bench` imports the harness."""
    res = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                          "lint_imports_command()"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 broken" in res.stdout


def test_architecture_doc_shows_the_current_import_graph():
    res = subprocess.run([sys.executable, "dev/import_graph.py"], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert res.stdout.strip() in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_no_stage_module_imports_tokkit_inside_a_function():
    """Imports sit at the top; only torch, Dask, the harness and missing kernels are imported lazily."""
    allowed = {"tokkit/bench", "tokkit/cli/pretrain.py"}
    lazy = []
    for path in sorted((ROOT / "tokkit").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if any(rel.startswith(a) for a in allowed):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines, 1):
            stripped = line.lstrip()
            if line != stripped and stripped.startswith(("from tokkit", "import tokkit")):
                previous = lines[n - 2].strip()
                if previous != "try:" and "torch_bridge" not in stripped:
                    lazy.append(f"{rel}:{n}: {stripped}")
    assert lazy == []


# What may be imported inside a function: torch and what needs it, Dask, matplotlib, the benchmark
# contenders, and a CLI command's own module (so `tokkit --help` stays fast)
LAZY_OK = ("torch", "dask", "distributed", "matplotlib", "safetensors", "psutil", "tokenizers", "tiktoken",
           "tiktoken_ext", "sentencepiece", "gigatoken", "fastokens", "tokie", "nanotoken", "transformers", "tokkit.bert",
           "tokkit.pretraining.torch_bridge")


def _function_imports(path: Path):
    """(line, module) of every import statement inside a function of the file at `path`."""
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom):
                    yield node.lineno, node.module or ""
                elif isinstance(node, ast.Import):
                    yield from ((node.lineno, alias.name) for alias in node.names)


def test_function_level_imports_are_only_the_allowed_kinds():
    lazy = [f"{path.relative_to(ROOT)}:{line}: {module}" for path in sorted((ROOT / "tokkit").rglob("*.py"))
            for line, module in _function_imports(path)
            if not any(module == m or module.startswith(m + ".") for m in LAZY_OK)]
    assert lazy == []
