"""What the extractive answerer's question-set tests share: the benchmark script
(bench/extractive_eval.py) loaded as a module, and the corpus texts its gold checker reads,
skipping when the Rust book or pydoc_data is absent."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "extractive_eval.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("extractive_eval", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("extractive_eval", module)
    spec.loader.exec_module(module)
    return module


def corpus_texts(bench: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    rust_src = (ROOT / ".." / "shared" / "data" / "rust-book" / "src").resolve()
    if not rust_src.is_dir():
        pytest.skip(f"the Rust book is not at {rust_src}: gold spans cannot be checked")
    pytest.importorskip("pydoc_data.topics", reason="this Python ships no pydoc_data")
    pyref = bench.export_pyref(tmp_path_factory.mktemp("pyref"))
    return bench.corpus_texts(rust_src, pyref)  # type: ignore[no-any-return]
