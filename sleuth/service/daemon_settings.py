"""Whether a workspace's CLI calls go through a daemon, and how long an idle one stays
(docs/faces.md#the-daemon).

``[tool.sleuth] daemon = false`` (or ``daemon = false`` in ``.sleuth.toml``) turns the daemon
off for the workspace, ``SLEUTH_NO_DAEMON=1`` for a process; ``daemon_idle`` is the idle time
in seconds before it exits (default 900), ``SLEUTH_DAEMON_IDLE`` overrides it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sleuth.errors import InvalidPath
from sleuth.workspace.policy import bounded_seconds, load_config
from sleuth.workspace.state_folder import STATE_DIR, make_state_dir

__all__ = ["DaemonSettings", "DEFAULT_IDLE_S", "NO_DAEMON_ENV", "IDLE_ENV", "daemon_state_dir"]

DEFAULT_IDLE_S = 900.0
MAX_IDLE_S = 86400.0
"""A day: a daemon idle longer than that holds its servers and memory for nobody."""
NO_DAEMON_ENV = "SLEUTH_NO_DAEMON"
IDLE_ENV = "SLEUTH_DAEMON_IDLE"


def _bad(reason: str) -> InvalidPath:
    return InvalidPath(
        f"cannot use the sleuth configuration: {reason}; fix the file and run again",
        details={"reason": reason},
    )


@dataclass(frozen=True)
class DaemonSettings:
    enabled: bool = True
    idle_s: float = DEFAULT_IDLE_S

    @classmethod
    def load(cls, root: str) -> DaemonSettings:
        """The workspace's settings under this process's environment; ``InvalidPath`` for a
        configuration that cannot be used."""
        conf = load_config(root)
        enabled = conf.get("daemon", True)
        if not isinstance(enabled, bool):
            raise _bad("daemon must be true or false")
        name, idle = "daemon_idle", conf.get("daemon_idle", DEFAULT_IDLE_S)
        override = os.environ.get(IDLE_ENV)
        if override:
            try:
                name, idle = IDLE_ENV, float(override)
            except ValueError:
                raise _bad(f"{IDLE_ENV} must be a number of seconds, got {override!r}") from None
        try:
            idle = bounded_seconds(idle, name, MAX_IDLE_S)
        except ValueError as exc:
            raise _bad(str(exc)) from None
        off = os.environ.get(NO_DAEMON_ENV, "") not in ("", "0")
        return cls(enabled=enabled and not off, idle_s=float(idle))

    def reload(self, root: str) -> DaemonSettings:
        """The settings now (a call may come after the configuration changed); a configuration
        that cannot be read keeps the daemon as it is, the call reports the error itself."""
        try:
            return DaemonSettings.load(root)
        except InvalidPath:
            return self


def daemon_state_dir(root: str) -> str:
    """The root's ``.sleuth/`` where the daemon keeps its lock and socket: a real folder of this
    user's with no symlink directly inside it, made if missing; ``InvalidPath`` otherwise
    (docs/SAFETY.md#cloaking-and-the-root: a planted ``.sleuth/daemon.lock`` symlink must not
    make the daemon write through it)."""
    return str(make_state_dir(Path(root) / STATE_DIR))
