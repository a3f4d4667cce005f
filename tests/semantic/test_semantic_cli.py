"""``sleuth search semantic:...`` through the real CLI, as a subprocess."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import run_cli


def test_cli_semantic_json_and_threshold(make_workspace: Any) -> None:
    root = make_workspace(
        {
            "a.py": 'def parse_config(path):\n    """Load settings from disk."""\n',
            "b.py": "def draw_circle(radius):\n    return radius\n",
        }
    )
    proc = run_cli(["search", "semantic:load settings", "--json", "--threshold", "0.2"], cwd=root)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["mode"] == "semantic"
    assert out["matches"][0]["path"] == "a.py"
    assert all(m["score"] >= 0.2 for m in out["matches"])
    assert "semantic index" not in proc.stderr  # no progress bar off a terminal
    bad = run_cli(["search", "semantic:x", "--threshold", "2"], cwd=root)
    assert bad.returncode != 0 and "threshold" in bad.stderr
