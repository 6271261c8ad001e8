"""No function of ``aborist/``, ``ledger/`` or ``cli/`` runs over 80 lines without a stated
reason (``scripts/long_functions.py``; docs/architecture.md, "Where each kind of change
goes")."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "long_functions", ROOT / "scripts" / "long_functions.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_long_function_states_its_reason() -> None:
    unjustified = [f for f in _script().long_functions() if not f[4]]
    assert unjustified == [], "split these or say why above them (# long: ...)"


def test_the_script_counts_the_body_and_reads_the_reason(tmp_path: Path) -> None:
    script = _script()
    body = "".join(f"    x{i} = {i}\n" for i in range(80))
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "a.py").write_text(
        "@deco\n@deco\ndef short():\n" + "".join(f"    y{i} = {i}\n" for i in range(79))
        + "\n\ndef bare():\n" + body
        + "\n\n# long: a reason\n# on two lines\n@deco\ndef kept():\n" + body
        + "\n\n# just a comment\ndef other():\n" + body,
        encoding="utf-8",
    )  # fmt: skip
    found = {name: (length, why) for _p, _l, name, length, why in script.long_functions(tmp_path)}
    assert found == {
        "bare": (81, None),
        "kept": (81, "a reason on two lines"),
        "other": (81, None),
    }
    assert script.main(["--check"]) == 0  # the house itself
