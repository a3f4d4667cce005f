"""One ``Session.close`` lets everything go: what its workbenches left open (the file watcher,
the registry's connection, language servers, the graph) and its own process resources."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sleuth.api import Workbench
from sleuth.service.session import Session
from sleuth.tuning import Tuning
from tests.conftest import MakeWorkspace


class _Servers:
    """A language-server pool double: records whether it was closed."""

    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_closing_the_session_closes_what_a_workbench_left_open(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace({"a.py": "def f():\n    return 1\n"})
    session = Session()
    wb = Workbench(root, session=session, watch=True, build_index=False)
    assert wb.search("return").total == 1
    servers = _Servers()
    wb._engines.servers = servers  # type: ignore[assignment]
    assert wb.workspace.watching
    session.close()  # the workbench itself is never closed
    assert servers.closed == 1 and wb._engines.servers is None
    assert not wb.workspace.watching
    assert session.match_pool() is None and session.closed
    session.close()  # idempotent: nothing is closed twice
    assert servers.closed == 1


def test_a_closed_workbench_is_not_closed_again_by_its_session(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace({"a.py": "x = 1\n"})
    session = Session()
    with Workbench(root, session=session, build_index=False) as wb:
        servers = _Servers()
        wb._engines.servers = servers  # type: ignore[assignment]
    assert servers.closed == 1 and not session.closed  # a given session stays open
    session.close()
    assert servers.closed == 1


def test_a_workbench_with_its_own_session_closes_it(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": "x = 1\n"})
    wb = Workbench(root, tuning=replace(Tuning(), ast_max_workers=1))
    assert wb.session.tuning.ast_max_workers == 1
    wb.close()
    assert wb.session.closed


def test_a_session_and_a_different_tuning_are_refused(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": "x = 1\n"})
    with pytest.raises(ValueError):
        Workbench(root, session=Session(), tuning=replace(Tuning(), snapshot_max=1))
