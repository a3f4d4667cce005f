"""The workspace's configuration and access policy (docs/faces.md#configuration,
docs/faces.md#access-policy-denied-files-are-cloaked).

Configuration comes from two TOML files at the root, merged:

* ``pyproject.toml``, table ``[tool.sleuth]``;
* ``.sleuth.toml``, its top-level keys (a ``[tool.sleuth]`` table there is read too).

Keys used by the workspace: ``deny`` (list of globs) and ``max_filesize`` (bytes, int). ``deny``
lists are *united* across both files — one file can never narrow what the other cloaks; for
every other key ``.sleuth.toml`` wins. Unknown keys are kept for other components.

``AccessPolicy`` answers "is this path cloaked?". A deny glob with ``/`` matches the relative
path, one without matches a base name at any depth, and a path is denied when it *or any folder
above it* matches (``secrets/**`` also cloaks the folder ``secrets``). Denied paths are dropped
everywhere and answer ``not_found`` like missing ones, so nothing reveals them.
"""

from __future__ import annotations

import math
import os
import stat
import time
from collections.abc import Sequence
from typing import Any

from sleuth.errors import InvalidPath
from sleuth.workspace.paths import PathGlobs, ancestors
from sleuth.workspace.user_globs import GlobSyntaxError, parse_glob

__all__ = [
    "DEFAULT_MAX_FILESIZE",
    "CONFIG_FILES",
    "load_config",
    "ConfigSignature",
    "config_signature",
    "config_in",
    "resolve_max_filesize",
    "bounded_seconds",
    "AccessPolicy",
]

DEFAULT_MAX_FILESIZE = 8 * 1024 * 1024
CONFIG_FILES = ("pyproject.toml", ".sleuth.toml")


def _config_error(path: str, reason: str) -> InvalidPath:
    return InvalidPath(
        f"cannot use the sleuth configuration in {path}: {reason}; fix the file (or remove the "
        "sleuth settings from it) and run again",
        details={"file": path, "reason": reason},
    )


def _read_toml(path: str, only_if: bytes = b"") -> dict[str, Any] | None:
    """The parsed TOML file, None if absent or (with ``only_if``) not mentioning it at all.

    A ``pyproject.toml`` that never says "sleuth" is not parsed: it cannot configure us, and a
    cold CLI should not pay for (or fail on) another tool's settings.
    """
    name = os.path.basename(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _config_error(name, f"unreadable ({exc.strerror})") from exc
    if not stat.S_ISREG(st.st_mode):
        # fail closed: a deny list must not be dropped silently, nor read from outside the root
        what = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a regular file"
        raise _config_error(name, f"it is {what}; configuration is read only from a regular file")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise _config_error(name, "it is not a regular file")
            with os.fdopen(os.dup(fd), "rb") as fh:
                raw = fh.read()
        finally:
            os.close(fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _config_error(name, f"unreadable ({exc.strerror})") from exc
    return _parse_toml(name, raw, only_if)


def _parse_toml(name: str, raw: bytes, only_if: bytes = b"") -> dict[str, Any] | None:
    if only_if and only_if not in raw:
        return None
    import tomllib  # deferred: most cold runs never parse TOML

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _config_error(name, "not UTF-8 text") from exc
    except tomllib.TOMLDecodeError as exc:
        raise _config_error(name, f"invalid TOML ({exc})") from exc


def _tool_table(doc: dict[str, Any], name: str) -> dict[str, Any]:
    tool = doc.get("tool")
    if not isinstance(tool, dict):
        return {}
    table = tool.get("sleuth")
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise _config_error(name, "[tool.sleuth] must be a table")
    return dict(table)


def _check(conf: dict[str, Any], name: str) -> None:
    deny = conf.get("deny")
    if deny is not None and (
        not isinstance(deny, list) or not all(isinstance(g, str) for g in deny)
    ):
        raise _config_error(name, 'deny must be a list of glob strings, e.g. deny = ["*.pem"]')
    for glob in deny or ():
        try:
            parse_glob(glob)
        except GlobSyntaxError as exc:  # said as the file's fault, not the query's
            raise _config_error(name, f"deny glob {glob[:80]!r} is invalid: {exc}") from None
    size = conf.get("max_filesize")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size <= 0):
        raise _config_error(name, "max_filesize must be a positive number of bytes")


def _conf(name: str, doc: dict[str, Any]) -> dict[str, Any]:
    """The sleuth settings of one parsed configuration file."""
    if name == "pyproject.toml":
        conf = _tool_table(doc, name)
    else:
        conf = {k: v for k, v in doc.items() if k != "tool"}
        conf.update(_tool_table(doc, name))
    _check(conf, name)
    return conf


def config_in(name: str, raw: bytes) -> dict[str, Any]:
    """The sleuth settings that bytes ``raw`` of the root's configuration file ``name`` hold
    (``{}`` for none); ``InvalidPath`` when they could not be used. An edit of such a file is
    refused when they change (docs/SAFETY.md#cloaking-and-the-root)."""
    doc = _parse_toml(name, raw, b"sleuth" if name == "pyproject.toml" else b"")
    return {} if doc is None else _conf(name, doc)


def load_config(root: str) -> dict[str, Any]:
    """The merged sleuth configuration of the workspace at ``root`` (empty if none)."""
    merged: dict[str, Any] = {}
    deny: list[str] = []
    for name in CONFIG_FILES:
        doc = _read_toml(os.path.join(root, name), b"sleuth" if name == "pyproject.toml" else b"")
        if doc is None:
            continue
        conf = _conf(name, doc)
        for glob in conf.pop("deny", None) or []:
            if glob not in deny:
                deny.append(glob)
        merged.update(conf)
    if deny:
        merged["deny"] = deny
    return merged


ConfigSignature = tuple[tuple[int, int, int, int, int] | None, ...]
"""Each configuration file's (inode, mode, size, mtime, ctime), None when absent."""

_RACY_NS = 2_000_000_000


def config_signature(root: str) -> ConfigSignature | None:
    """What the configuration files of ``root`` are now, by one ``lstat`` each: a long-running
    workspace compares it before every call and reads them again when it moved
    (docs/SAFETY.md#cloaking-and-the-root). None, never equal to anything, while one of them
    changed in the last two seconds: two writes within one timestamp tick leave the same
    signature (the content cache's "racily clean" rule, ``reader.py``)."""
    now = time.time_ns()
    out: list[tuple[int, int, int, int, int] | None] = []
    for name in CONFIG_FILES:
        try:
            st = os.lstat(os.path.join(root, name))
        except FileNotFoundError:
            out.append(None)
            continue
        except OSError:
            return None  # load_config says why
        if now - max(st.st_mtime_ns, st.st_ctime_ns) <= _RACY_NS:
            return None
        out.append((st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(out)


def bounded_seconds(value: object, name: str, most: float) -> float:
    """A configured duration: a finite number of seconds above 0 and at most ``most``;
    ``ValueError`` naming ``name`` otherwise. TOML spells ``inf`` and ``nan``: a configuration
    arriving with the tree set ``server_timeout = inf`` (an ``internal`` overflow) or ``nan`` (every
    request timed out at once), so a duration is bounded (docs/faces.md#configuration)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 < value <= most
    ):
        raise ValueError(
            f"{name} must be a number of seconds above 0 and at most {most:g}, got {value!r}"
        )
    return float(value)


def resolve_max_filesize(explicit: int | None, config: dict[str, Any]) -> int:
    """The size cap: the explicit argument, else ``max_filesize`` of the config, else 8 MiB."""
    if explicit is not None:
        if explicit <= 0:
            raise InvalidPath(
                f"max_filesize must be a positive number of bytes, got {explicit}",
                details={"max_filesize": explicit},
            )
        return explicit
    value = config.get("max_filesize")
    return value if isinstance(value, int) else DEFAULT_MAX_FILESIZE


class AccessPolicy:
    """Which workspace paths are cloaked by ``deny`` globs."""

    __slots__ = ("globs",)

    def __init__(self, deny: Sequence[str] = ()) -> None:
        self.globs = PathGlobs(deny, whole_folder=True)

    def __bool__(self) -> bool:
        return bool(self.globs)

    def denies_entry(self, rel: str) -> bool:
        """``rel`` itself matches a deny glob (the walker has already checked its folders)."""
        return bool(self.globs) and self.globs.match(rel)

    def is_denied(self, rel: str) -> bool:
        """``rel`` or a folder above it matches a deny glob."""
        if not self.globs or not rel:
            return False
        return any(self.globs.match(p) for p in ancestors(rel))
