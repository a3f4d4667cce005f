"""The environment a language server (and its ``--version`` probe) runs with.

* ``PATH`` keeps only absolute entries (``sleuth.child_env``): a server runs in the workspace
  root, where a relative entry finds the repository's own programs.
* With ``ServerSpec.rustup_pinned``: ``RUSTUP_TOOLCHAIN`` is set to the user's toolchain.
  rustup's proxies (``rust-analyzer``, and the ``cargo`` and ``rustc`` rust-analyzer runs) pick
  the toolchain a ``rust-toolchain.toml`` in the working directory names, and its
  ``[toolchain] path`` may name any folder: ``path = "/proc/self/cwd/tc"`` ran the
  repository's ``tc/bin/rust-analyzer`` (seen, docs/SAFETY.md#what-runs). The variable outranks
  the file. The user's own ``RUSTUP_TOOLCHAIN`` is kept; else rustup's default, asked from
  ``/``, where no repository's file is read.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from sleuth.child_env import absolute_path, child_env

__all__ = ["server_env", "rustup_default"]


def rustup_default(path: str) -> str | None:
    """The toolchain ``rustup default`` names (``stable-x86_64-unknown-linux-gnu``), or None
    without rustup (then no proxy reads a toolchain file). Asked at each Rust server start or
    probe (a session probes once): no module-level memo (docs/architecture.md)."""
    rustup = shutil.which("rustup", path=path)
    if rustup is None:
        return None
    try:
        done = subprocess.run(
            [rustup, "default"],
            cwd="/",
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    words = done.stdout.split()
    return words[0] if done.returncode == 0 and words else None


def server_env(*, rustup_pinned: bool) -> dict[str, str]:
    """The environment for a server's process: absolute ``PATH``; with ``rustup_pinned``, the
    user's rustup toolchain."""
    extra: dict[str, str] = {}
    if rustup_pinned and not os.environ.get("RUSTUP_TOOLCHAIN"):
        toolchain = rustup_default(absolute_path())
        if toolchain is not None:
            extra["RUSTUP_TOOLCHAIN"] = toolchain
    return child_env(extra)
