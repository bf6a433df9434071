"""The rules engine stands alone: no Django, no channels, nothing outside the
standard library and itself."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "challenges" / "rules"


@pytest.mark.parametrize(
    "package", ["challenges.rules", "challenges.rules.bns", "challenges.rules.storytelling"]
)
def test_importing_the_rules_loads_no_django(package: str) -> None:
    code = (
        f"import {package}, sys; "
        "assert 'django' not in sys.modules, 'django imported'; "
        "assert 'channels' not in sys.modules, 'channels imported'"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_the_rules_import_only_the_standard_library_and_themselves() -> None:
    allowed = set(sys.stdlib_module_names) | {"challenges"}
    for path in sorted(RULES.rglob("*.py")):  # the packages (bns, storytelling) too
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots = [node.module.split(".")[0]]
                if roots == ["challenges"]:
                    assert node.module.startswith("challenges.rules"), (path.name, node.module)
            else:
                continue
            assert set(roots) <= allowed, (path.name, roots)
