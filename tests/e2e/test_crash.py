"""Crash safety of a multi-file edit (docs/SAFETY.md#the-journal-and-recovery): a scoped refactor
killed with SIGKILL.

Each run builds a workspace of five files, scopes a search with a structural one (``old_api``
inside the functions ``ast:def $F($$$A): $$$B`` matched, not at module level) and starts a
child process that replaces ``SEARCH#H:all:match`` through the Python API. The child is killed
either at a named point of the journal's commit (``SLEUTH_CRASH_AT``: before/after the
manifest, after each file, after the commit) or by a real ``SIGKILL`` after a random delay —
with two shared cores a real kill lands anywhere: while resolving, mid-write, mid-rename, after
the commit. Then ``Workbench(root)`` starts (it recovers) and every file must be entirely old
or entirely new, all five in the same state, with no ``.sleuth-tmp-*`` file and no journal left.

Runs are seeded (the seed is in every failure message). Killing at a named point has a known
outcome (all new only after the commit); a real kill may land before, during or after the
commit, so only consistency is asserted for it.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from sleuth import Workbench
from tests.conftest import MakeWorkspace

FILES = 5
NAMED_RUNS = 30
REAL_KILL_RUNS = 30
POINTS = [
    "before-manifest",
    "after-manifest",
    *(f"after-file-{i}" for i in range(FILES)),
    "after-commit",
]
SEED = 20240917

CHILD = """
import sys
from sleuth import Workbench
wb = Workbench(sys.argv[1], build_index=False)
sys.stdout.write("ready\\n")
sys.stdout.flush()
wb.replace(sys.argv[2], "new_api")
"""


def old_text(i: int) -> bytes:
    return (
        f"import os\n\n\ndef handler_{i}(req):\n    data = old_api(req, {i})\n"
        f"    return old_api(data)  # old_api\n\n\nREGISTRY = ['old_api', {i}]\n"
    ).encode()


def new_text(i: int) -> bytes:
    return old_text(i).replace(b"old_api", b"new_api", 3)  # the three inside the function


def files() -> dict[str, str | bytes]:
    return {f"pkg/mod_{i}.py": old_text(i) for i in range(FILES)}


def scoped_reference(root: Path) -> str:
    """``SEARCH#H:all:match`` of ``old_api`` inside the functions of all five files."""
    with Workbench(root, build_index=False) as wb:
        functions = wb.search("ast:def $F($$$A): $$$B").to_json()
        assert functions["total"] == FILES and functions["complete"]
        scoped = wb.search("old_api", path=functions["all"]["match"]).to_json()
        assert scoped["complete"] and scoped["total"] == 3 * FILES
        return str(scoped["all"]["match"])


def spawn(root: Path, reference: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), reference],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def outcome(root: Path, context: str) -> str:
    """Recover by starting a Workbench, then ``"old"`` or ``"new"`` (all five agreeing)."""
    Workbench(root, build_index=False).close()
    states = []
    for i in range(FILES):
        data = (root / f"pkg/mod_{i}.py").read_bytes()
        assert data in (old_text(i), new_text(i)), f"{context}: mod_{i}.py torn: {data!r}"
        states.append("old" if data == old_text(i) else "new")
    assert len(set(states)) == 1, f"{context}: files disagree: {states}"
    assert list(root.rglob(".sleuth-tmp-*")) == [], context
    journal = root / ".sleuth" / "journal"
    assert not journal.exists() or list(journal.iterdir()) == [], context
    return states[0]


def calibrate(root: Path, reference: str) -> float:
    """Seconds from the child's ``ready`` to its exit (only used to spread the kills)."""
    proc = spawn(root, reference, dict(os.environ))
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"
    start = time.monotonic()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    return time.monotonic() - start


def test_killed_refactors_end_all_old_or_all_new(make_workspace: MakeWorkspace) -> None:
    rng = random.Random(SEED)
    root = make_workspace(files())
    window = calibrate(root, scoped_reference(root))
    assert outcome(root, "calibration") == "new"

    seen: dict[str, int] = {}
    for run in range(NAMED_RUNS + REAL_KILL_RUNS):
        root = make_workspace(files())
        reference = scoped_reference(root)
        env = {k: v for k, v in os.environ.items() if k != "SLEUTH_CRASH_AT"}
        if run < NAMED_RUNS:
            point = POINTS[run % len(POINTS)] if run < len(POINTS) else rng.choice(POINTS)
            context = f"seed {SEED} run {run} SLEUTH_CRASH_AT={point}"
            proc = spawn(root, reference, {**env, "SLEUTH_CRASH_AT": point})
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == -signal.SIGKILL, f"{context}: {err.decode()}"
            expected = "new" if point == "after-commit" else "old"
            assert outcome(root, context) == expected, context
        else:
            delay = rng.uniform(0, window * 1.3)
            context = f"seed {SEED} run {run} SIGKILL after {delay * 1000:.1f} ms"
            proc = spawn(root, reference, env)
            assert proc.stdout is not None
            assert proc.stdout.readline() == b"ready\n", context
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
            _, err = proc.communicate(timeout=120)
            assert proc.returncode in (0, -signal.SIGKILL), f"{context}: {err.decode()}"
            result = outcome(root, context)
            if proc.returncode == 0:
                assert result == "new", context
            seen[result] = seen.get(result, 0) + 1
        # the workspace stays usable: a fresh search finds what the files say
        with Workbench(root, build_index=False) as wb:
            total = wb.search("new_api").to_json()["total"]
            assert total in (0, 3 * FILES), context
    assert sum(seen.values()) == REAL_KILL_RUNS
