"""Imports point one way (DESIGN): workspace <- engines <- query <- resources/edit <- faces.

Engines never import each other or a face; only ``query`` names the engines. The public API
is an explicit ``__all__``, pinned here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import sleuth

PKG = Path(sleuth.__file__).parent

BASE = {"errors", "fields", "model", "prefilter", "write_behind"}
ENGINES = {"text_search", "ast_search", "lsp_bridge", "graph"}
LAYER = {"workspace": 1, **dict.fromkeys(ENGINES, 2), "query": 3, "resources": 4, "edit": 4}
FACE_LAYER = 5


def _layer(part: str) -> int:
    if part in BASE:
        return 0
    return LAYER.get(part, FACE_LAYER)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sleuth."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("sleuth."):
                    found.add(alias.name.split(".")[1])
    return found


def test_imports_point_one_way() -> None:
    wrong = []
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG)
        own = rel.parts[0].removesuffix(".py")
        for target in _imports(path):
            if target == own:
                continue
            if own in ENGINES and target in ENGINES:
                wrong.append(f"{rel}: engine imports engine {target}")
            elif _layer(target) > _layer(own):
                wrong.append(f"{rel}: imports {target} (layer {_layer(target)} > {_layer(own)})")
    assert wrong == []


def test_public_api_is_pinned() -> None:
    assert sleuth.__all__ == ["Workbench", "SleuthError"]
    from sleuth.api import Workbench

    assert sleuth.Workbench is Workbench
