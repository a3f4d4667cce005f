"""The listing prefetch of one-shot processes (``sleuth.listing_prefetch``, owned by a session).

``start`` forks only in a process with one thread, and pytest's may have more, so each case
runs in a fresh interpreter (``_run``) and prints what it saw as JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from tests.conftest import MakeWorkspace

TREE: dict[str, str | bytes] = {
    ".gitignore": "build/\n*.log\n",
    "src/app.py": "def main():\n    pass\n",
    "src/util/helpers.py": "x = 1\n",
    "src/big.bin": b"\x00" * 64,
    "build/out.py": "ignored = True\n",
    "notes.log": "ignored\n",
    "README.md": "# readme\n",
}


def _run(code: str, root: Path) -> Any:
    script = textwrap.dedent(code)
    proc = subprocess.run(
        [sys.executable, "-c", script, str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


_HEADER = """
import json, os, sys
from sleuth.listing_prefetch import ListingPrefetch
from sleuth.workspace.workspace import Workspace
root = sys.argv[1]
lp = ListingPrefetch()
def rows(listing):
    return [[f.path, f.size, f.mtime_ns] for f in listing.files]
"""


def test_the_prefetched_listing_is_the_walk_and_is_adopted(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(TREE)
    seen = _run(
        _HEADER
        + """
started = lp.start(root, no_ignore=False, scope="src", include=(), exclude=("*.md",),
                   any_size=False)
ws = Workspace(root, prefetched=lp)
pending = lp.pending
adopted = ws.list_files("src", (), ("*.md",))
left = lp.pending
walked = ws.list_files("src", (), ("*.md",))  # nothing pending any more: a real walk
print(json.dumps({"started": started, "pending": pending, "left": left,
                  "adopted": rows(adopted), "walked": rows(walked),
                  "ignored": [adopted.ignored, walked.ignored]}))
""",
        root,
    )
    assert seen["started"] is True and seen["pending"] == 1 and seen["left"] == 0
    assert seen["adopted"] == seen["walked"]
    assert [row[0] for row in seen["adopted"]] == [
        "src/app.py",
        "src/big.bin",
        "src/util/helpers.py",
    ]
    assert seen["ignored"][0] == seen["ignored"][1]


def test_a_listing_for_another_request_is_not_adopted(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(TREE)
    seen = _run(
        _HEADER
        + """
calls = []
real = lp.take
def spy(key, cap):
    got = real(key, cap)
    calls.append(got is not None)
    return got
lp.take = spy
lp.start(root, no_ignore=False, scope="", include=(), exclude=(), any_size=False)
ws = Workspace(root, prefetched=lp)
other = ws.list_files("", (), ("*.py",))  # other globs: the child's listing is dropped
print(json.dumps({"calls": calls, "rows": rows(other), "pending": lp.pending}))
""",
        root,
    )
    assert seen["calls"] == [False] and seen["pending"] == 0
    assert [row[0] for row in seen["rows"]] == [".gitignore", "README.md", "src/big.bin"]


def test_a_scope_the_child_cannot_list_falls_back_and_discard_reaps(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(TREE)
    seen = _run(
        _HEADER
        + """
lp.start(root, no_ignore=False, scope="missing/dir", include=(), exclude=(), any_size=False)
key = (os.path.realpath(root), False, "missing/dir", (), (), False)
failed = lp.take(key, Workspace(root).max_filesize)
lp.start(root, no_ignore=False, scope="", include=(), exclude=(), any_size=False)
pid = next(iter(lp._pending.values()))[0]
lp.discard()
try:
    os.waitpid(pid, os.WNOHANG)
    reaped = False
except ChildProcessError:
    reaped = True
print(json.dumps({"failed": failed is None, "reaped": reaped, "pending": lp.pending}))
""",
        root,
    )
    assert seen == {"failed": True, "reaped": True, "pending": 0}


def test_no_fork_beside_other_threads(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(TREE)
    seen = _run(
        _HEADER
        + """
import threading
stop = threading.Event()
t = threading.Thread(target=stop.wait)
t.start()
started = lp.start(root, no_ignore=False, scope="", include=(), exclude=(), any_size=False)
stop.set(); t.join()
print(json.dumps({"started": started, "pending": lp.pending}))
""",
        root,
    )
    assert seen == {"started": False, "pending": 0}


def test_a_session_hands_its_prefetch_to_its_workbench_and_discards_the_rest(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(TREE)
    seen = _run(
        """
import json, os, sys
from sleuth.api import Workbench
from sleuth.service.session import Session
root = sys.argv[1]
args = dict(no_ignore=False, scope="", include=(), exclude=(), any_size=False)
session = Session()
started = session.prefetch_listing(root, **args)
with Workbench(root, build_index=False, servers=False, session=session) as wb:
    total = wb.search("def").to_json()["total"]
adopted = session.prefetched.pending == 0 and not session.closed  # the caller's to close
unused = Session()
unused.prefetch_listing(root, **args)
pid = next(iter(unused.prefetched._pending.values()))[0]
unused.close()
unused.close()  # idempotent
try:
    os.waitpid(pid, os.WNOHANG)
    reaped = False
except ChildProcessError:
    reaped = True
print(json.dumps({"started": started, "total": total, "adopted": adopted, "reaped": reaped,
                  "pending": unused.prefetched.pending}))
""",
        root,
    )
    assert seen == {"started": True, "total": 1, "adopted": True, "reaped": True, "pending": 0}
