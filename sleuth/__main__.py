"""``python -m sleuth``: the same command line as the ``sleuth`` script (``sleuth.client``)."""

from __future__ import annotations

from sleuth.client import console

console()
