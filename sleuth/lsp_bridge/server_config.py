"""Which configuration may choose a language server's command, and how much of it.

A workspace's own files (``[tool.sleuth.servers]`` of ``pyproject.toml``, ``[servers]`` of
``.sleuth.toml``) come with the code: a cloned repository or an unpacked tarball writes them.
A command there would run the moment an agent opens the workspace (the MCP server warms the
workspace's servers at start), so a workspace may only *pick* a known server by its bare name
(``python = "jedi-language-server"``), which runs with its usual arguments. A command of one's
own — a path, arguments, any other program — is read only from the user's configuration
(``$SLEUTH_CONFIG``, else ``$XDG_CONFIG_HOME/sleuth/config.toml``, else
``~/.config/sleuth/config.toml``), which no repository writes. docs/SAFETY.md#what-runs.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sleuth.errors import InvalidQuery, Unsupported

__all__ = [
    "user_config_path",
    "user_servers",
    "configured_command",
    "where_configured",
    "ServerChoice",
]

ServerChoice = tuple[tuple[str, ...], bool]
"""(argv, trusted): the command a configuration names and whether the user's own file did."""


def user_config_path() -> Path | None:
    """The user's configuration file (it need not exist); None when ``SLEUTH_CONFIG`` is set
    empty (no user configuration at all: what the test suite runs with)."""
    explicit = os.environ.get("SLEUTH_CONFIG")
    if explicit is not None:
        return Path(explicit) if explicit else None
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "sleuth" / "config.toml"


def user_servers() -> dict[str, Any]:
    """The ``[servers]`` table of the user's configuration, or ``{}`` without one."""
    path = user_config_path()
    if path is None:
        return {}
    try:
        raw = path.read_bytes()
    except OSError:
        return {}
    import tomllib  # deferred: read only when a server is chosen

    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidQuery(
            f"{path}: not valid TOML ({exc}); fix your sleuth configuration",
            details={"path": str(path)},
        ) from exc
    servers = doc.get("servers")
    return servers if isinstance(servers, dict) else {}


def _argv(lang: str, raw: object, where: str) -> tuple[str, ...]:
    if isinstance(raw, str):
        argv = shlex.split(raw)
    elif isinstance(raw, list) and all(isinstance(a, str) for a in raw):
        argv = list(raw)
    else:
        argv = []
    if not argv:
        raise InvalidQuery(
            f"{where} {lang} must be a command, e.g. "
            f'{lang} = ["jedi-language-server"]; fix {where}',
            details={"language": lang},
        )
    return tuple(argv)


def configured_command(
    lang: str, workspace: Mapping[str, Any], known: Mapping[str, tuple[str, ...]]
) -> ServerChoice | None:
    """The command configured for ``lang`` — the user's first, then the workspace's — or None.

    ``known`` maps each known server's name and binary to its usual command. A workspace entry
    must be one of them, bare (or exactly its usual command); anything else is ``unsupported``
    with where to put it instead.
    """
    mine = user_servers()
    if lang in mine:
        return _argv(lang, mine[lang], "[servers] of your sleuth configuration"), True
    servers = workspace.get("servers")
    if not isinstance(servers, dict) or lang not in servers:
        return None
    argv = _argv(lang, servers[lang], "[tool.sleuth.servers] (pyproject.toml or .sleuth.toml)")
    usual = known.get(argv[0])
    if usual is not None and (len(argv) == 1 or argv == usual):
        return argv, False
    names = ", ".join(sorted({c[0] for c in known.values()}))
    raise Unsupported(
        f"[tool.sleuth.servers] {lang} = {shlex.join(argv)!r}: a workspace's own configuration "
        f"may only pick a known server by its bare name ({names}), since a repository must not "
        f"choose programs for sleuth to run; put your own command in {_user_file()} "
        f"([servers] {lang} = [...]) (docs/SAFETY.md#what-runs)",
        details={"language": lang, "command": list(argv)},
    )


def where_configured(lang: str) -> str:
    """Where ``lang``'s configured server comes from, as a message names it."""
    if lang in user_servers():
        return f"[servers] of {_user_file()}"
    return "[tool.sleuth.servers]"


def _user_file() -> str:
    path = user_config_path()
    return str(path) if path is not None else "~/.config/sleuth/config.toml"
