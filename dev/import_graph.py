"""Print tokkit's import graph between stages as a Mermaid diagram (docs/architecture.md holds it).

    pip install import-linter   # brings grimp, which reads the imports without running the code
    python dev/import_graph.py

Each node is a top-level package or module of tokkit; an arrow A --> B means some module of A
imports some module of B. The layer order is the one `lint-imports` checks (pyproject.toml).
"""
import grimp

STAGES = ["cli", "bench", "quality", "bert", "pretraining", "labelled", "inputs", "train", "tokenizer", "text", "_native",
          "helpers"]
HELPERS = {"_files", "_threads", "_progress", "_charts", "errors"}


def stage(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None
    return "helpers" if parts[1] in HELPERS else parts[1]


def main() -> None:
    graph = grimp.build_graph("tokkit")
    edges = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = stage(module), stage(imported)
            if a and b and a != b and a in STAGES and b in STAGES:
                edges.add((a, b))
    print("```mermaid")
    print("graph TD")
    for a, b in sorted(edges, key=lambda e: (STAGES.index(e[0]), STAGES.index(e[1]))):
        print(f"    {a} --> {b}")
    print("```")


if __name__ == "__main__":
    main()
