"""The environment of every program sleuth starts: ``PATH`` without its relative entries.

A relative ``PATH`` entry — an empty one (``PATH=:/usr/bin``, what ``PATH=$X:$PATH`` leaves when
``X`` is unset), ``.``, ``node_modules/.bin`` — names a folder of whatever directory a lookup
happens in, and sleuth's programs run in the workspace: ``git log`` and the language servers
are started with the root as their working directory, so the child's own lookup found a
``./git`` or ``./gopls`` the repository carries before the real one (seen, docs/SAFETY.md#what-runs).
Only absolute entries are searched, by sleuth and, through this environment, by the programs
it starts (a server looking up ``cargo`` or ``npm``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["absolute_path", "child_env"]


def absolute_path(path: str | None = None) -> str:
    """``path`` (default: ``$PATH``) with only its absolute entries, in order."""
    value = os.environ.get("PATH", "") if path is None else path
    return os.pathsep.join(e for e in value.split(os.pathsep) if e and os.path.isabs(e))


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment for a child: ``PATH`` absolute-only, ``extra`` on top."""
    env = dict(os.environ)
    env["PATH"] = absolute_path(env.get("PATH", ""))
    env.update(extra or {})
    return env
