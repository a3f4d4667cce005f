"""Durations in a workspace's configuration are finite and bounded (docs/faces.md#configuration).

Seen: TOML spells ``inf`` and ``nan``, and a ``pyproject.toml`` arriving with the tree set
``server_timeout = inf`` (every ``symbols:`` answered ``internal``: an overflow) or ``nan`` (every
request timed out at once); ``daemon_idle = inf`` asked for a daemon that never leaves.
"""

from __future__ import annotations

import pytest

from sleuth import Workbench
from sleuth.errors import InvalidPath
from sleuth.service.daemon_settings import IDLE_ENV, MAX_IDLE_S, DaemonSettings
from sleuth.service.workbench import SERVER_TIMEOUT_MAX_S
from tests.conftest import MakeWorkspace

SOURCE = "def total():\n    return 1\n\n\nprint(total())\n"
BAD = ["nan", "inf", "-inf", "0", "-1", "true", '"10"', "1e12"]


@pytest.mark.parametrize("value", BAD)
def test_a_server_timeout_out_of_bounds_is_refused(
    make_workspace: MakeWorkspace, value: str
) -> None:
    root = make_workspace(
        {"a.py": SOURCE, "pyproject.toml": f"[tool.sleuth]\nserver_timeout = {value}\n"}
    )
    with Workbench(root) as wb, pytest.raises(InvalidPath, match="server_timeout must be"):
        wb.search("symbols:total")


@pytest.mark.parametrize("value", BAD)
def test_a_daemon_idle_out_of_bounds_is_refused(make_workspace: MakeWorkspace, value: str) -> None:
    root = make_workspace({".sleuth.toml": f"daemon_idle = {value}\n"})
    with pytest.raises(InvalidPath, match="daemon_idle must be"):
        DaemonSettings.load(str(root))


@pytest.mark.parametrize("value", ["inf", "nan", "-5", str(MAX_IDLE_S * 2)])
def test_the_idle_override_is_bounded_too(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(IDLE_ENV, value)
    with pytest.raises(InvalidPath, match=IDLE_ENV):
        DaemonSettings.load(str(make_workspace({"a.py": SOURCE})))


def test_durations_within_bounds_are_kept(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "a.py": SOURCE,
            ".sleuth.toml": f"daemon_idle = {MAX_IDLE_S:g}\nserver_timeout = {SERVER_TIMEOUT_MAX_S:g}\n",
        }
    )
    assert DaemonSettings.load(str(root)).idle_s == MAX_IDLE_S
    with Workbench(root) as wb:
        assert wb.search("symbols:total").total >= 1
