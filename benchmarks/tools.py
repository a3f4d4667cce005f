"""Where the benchmarks find the programs they time (sleuth, rg, ast-grep).

The venv's own copy first (``make`` installs rg and ast-grep there), then ``PATH``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

__all__ = ["find_tool"]


def find_tool(name: str) -> str:
    """The path of ``name``, beside this interpreter or on ``PATH``; exits when missing."""
    local = Path(sys.executable).with_name(name)
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} not found; run `make` or pip install -e '.[test]'")
    return found
