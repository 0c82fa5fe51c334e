"""Where the shared corpus is, and whether it is present."""
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
HAVE_CORPUS = SHARED.is_dir()
needs_corpus = pytest.mark.skipif(not HAVE_CORPUS, reason="../shared/corpus is absent")
