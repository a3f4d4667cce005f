"""The Python face: ``Workbench(root)`` with one method per verb (docs/faces.md#python-api).

The workbench itself lives in the service layer (``sleuth.service.workbench``), where every
face meets the engines; this module is its public name, ``sleuth.api.Workbench``.
"""

from __future__ import annotations

from sleuth.service.workbench import Workbench

__all__ = ["Workbench"]
