"""Where the shared corpus and the labelled tasks are, and whether they are present."""
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
HAVE_CORPUS = SHARED.is_dir()
needs_corpus = pytest.mark.skipif(not HAVE_CORPUS, reason="../shared/corpus is absent")

TASKS = SHARED.parent / "tasks"
HAVE_TASKS = TASKS.is_dir()
needs_tasks = pytest.mark.skipif(not HAVE_TASKS, reason="../shared/tasks is absent")
