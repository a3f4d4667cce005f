"""The edit layer's safety under outside writes and injected faults, model-checked (issue 15).

``tests/e2e/safety_model.py`` holds the machine and says what it checks (invariants 1-5: the
outside folder, the denied file and its marker, every file exactly what the harness wrote or an
edit applied to the bytes it was verified against, only allowed error codes and no hang, answers
that match the disk). Here it runs:

* against a ``Workbench(root, watch=True)`` (the MCP server's shape, watcher trusted from the
  start: see ``safety_helpers.SETTLED``) and a ``Workbench(root, watch=False)``, together at least
  ``MIN_STEPS`` random steps, derandomized so CI runs the same sequences every time;
* twice more with a bug planted, collecting violations, each test passing only when the harness
  finds one of ``STALE_WRITES`` (an edit written over bytes it was not computed from): the
  write-time verification (``journal.verify_current``) answering True for any bytes, and the
  resolver's stamp check (``Resolver._current``, ``Resolver._to_range``) accepting a file
  whatever its stamp.

The machine runs on tmpfs when there is one; 20,000 steps take 60-90 s on a shared 2-core VM.
A failure prints the shrunk sequence of rules (``state.…`` lines) and the harness's own log of
the steps that led to it; ``benchmarks/safety_soak.py`` runs the machine for longer.

The ``.hypothesis`` database is off (``database=None``): nothing is written into the tree.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from sleuth.errors import StaleReference
from sleuth.resources import selection
from sleuth.resources.refs import Unit
from sleuth.resources.registry_rows import MatchRow
from sleuth.workspace import FileText
from tests.e2e.safety_model import Report, safety_machine

MIN_STEPS = 20_000
"""Steps both machines run together in CI (each about half: EXAMPLES x up to STEPS_PER_EXAMPLE,
derandomized, so the count is the same on every run)."""

EXAMPLES = 72
STEPS_PER_EXAMPLE = 200
PLANTED_EXAMPLES = 10
STALE_WRITES = {
    "inv3-file",
    "inv3-should-refuse:stale-single",
    "inv3-should-refuse:changed-since",
    "inv3-should-refuse:target-changed",
}
"""The violations that mean an edit wrote over bytes it was not computed from: what the planted
bugs must produce (none of them is seen with the bugs left out)."""


def _settings(examples: int, *, shrink: bool = True) -> settings:
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if shrink else [])
    return settings(
        max_examples=examples,
        stateful_step_count=STEPS_PER_EXAMPLE,
        deadline=None,
        database=None,
        derandomize=True,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )


@pytest.mark.parametrize("watch", [True, False], ids=["watch", "no-watch"])
def test_edits_stay_safe_under_outside_writes_and_faults(watch: bool) -> None:
    report = Report(strict=True)
    try:
        run_state_machine_as_test(safety_machine(report, watch=watch), settings=_settings(EXAMPLES))
    finally:
        print(report.summary())
    assert report.steps >= MIN_STEPS // 2, report.summary()  # (both machines: MIN_STEPS)
    # the harness is not toothless: edits landed, were refused, and faults fired at every point
    assert report.edits["ok"] >= report.steps // 50, report.summary()
    assert report.edits["refused:stale_reference"] > 0, report.summary()
    for point in ("planned", "verified", "before-rename"):
        assert report.hook_calls[point] > 0, f"the edit layer never called fault_hook({point!r})"
        assert any(k.startswith(point + ":") for k in report.faults), report.summary()


def _planted(examples: int) -> Report:
    """Run the machine with a bug planted, collecting violations (not stopping at the first: a
    real bug of another kind must not hide whether the planted one is caught)."""
    report = Report(strict=False)
    for watch in (True, False):
        run_state_machine_as_test(
            safety_machine(report, watch=watch), settings=_settings(examples, shrink=False)
        )
    return report


def test_the_harness_catches_writes_without_verification(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the bytes on disk never compared to the plan's, an outside write between the plan
    and the lock (a ``planned`` fault) is silently overwritten: the harness must say so."""
    from sleuth.edit import journal

    monkeypatch.setattr(journal, "verify_current", lambda current, change: True)
    report = _planted(PLANTED_EXAMPLES)
    assert STALE_WRITES & set(report.violations), report.summary()


def test_the_harness_catches_references_resolved_without_their_stamp(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the resolver taking a file as it is now whatever its stamp, a single-match reference
    into a file changed since its search is spliced at offsets found in other bytes."""

    def unchecked(self: selection.Resolver, path: str, stamp: str, ref: object) -> FileText:
        ft = self._fresh(path)
        if ft is None:
            raise StaleReference(f"{path} is gone", details={"files": [path]})
        return ft

    monkeypatch.setattr(selection.Resolver, "_current", unchecked)
    monkeypatch.setattr(selection.Resolver, "_to_range", _unchecked_range)
    report = _planted(PLANTED_EXAMPLES)
    assert STALE_WRITES & set(report.violations), report.summary()


_checked_range = selection.Resolver._to_range


def _unchecked_range(
    self: selection.Resolver, ft: FileText, row: MatchRow, unit: Unit
) -> selection.Range:
    """``_to_range`` without its own stamp comparison (the second half of the planted bug)."""
    return _checked_range(self, ft, dataclasses.replace(row, stamp=ft.stamp), unit)
