"""``python -m sleuth``: the same command line as the ``sleuth`` script (``sleuth.cli``)."""

from __future__ import annotations

from sleuth.cli import console

console()
