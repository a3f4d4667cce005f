"""sleuth never rewrites its own settings: an edit that changes the ``[tool.sleuth]`` table or
``.sleuth.toml`` settings (the deny list above all) is refused whole, any other edit of those
files goes through (docs/SAFETY.md#cloaking-and-the-root)."""

from __future__ import annotations

import os

import pytest

from sleuth import Workbench
from sleuth.errors import UnsafeSelection
from tests.conftest import MakeWorkspace

PYPROJECT = '[project]\nname = "demo"\nversion = "1.0"\n\n[tool.sleuth]\ndeny = ["secrets/**"]\n'


@pytest.fixture
def root(make_workspace: MakeWorkspace) -> str:
    return str(
        make_workspace(
            {
                "pyproject.toml": PYPROJECT,
                ".sleuth.toml": '# the rules\ndeny = ["*.pem"]\nmax_filesize = 1000000\n',
                "secrets/key.py": "secrets = 1\n",
                "app.py": "import secrets\nversion = '1.0'\n",
                "id.pem": "secrets\n",
            }
        )
    )


def _text(root: str, rel: str) -> str:
    with open(os.path.join(root, rel)) as f:
        return f.read()


def test_an_edit_of_the_deny_list_is_refused_whole(root: str) -> None:
    with Workbench(root, build_index=False) as wb:
        found = wb.search("secrets")
        assert sorted({m["path"] for m in found.to_json()["matches"]}) == [
            "app.py",
            "pyproject.toml",
        ]
        with pytest.raises(UnsafeSelection, match="own settings"):
            wb.replace(found.result + ":all:match", "public")
        for ref in (
            wb.search('"secrets/**"', path="pyproject.toml").matches[0]["ref"]["match"],
            wb.search("*.pem", path=".sleuth.toml").matches[0]["ref"]["line"],
            wb.search("max_filesize").matches[0]["ref"]["line"],
        ):
            with pytest.raises(UnsafeSelection):
                wb.delete(ref)
        with pytest.raises(UnsafeSelection):  # invalid TOML: sleuth could not start there
            wb.insert(wb.search("[tool.sleuth]").matches[0]["ref"]["line"], "[[[")
    assert _text(root, "pyproject.toml") == PYPROJECT
    assert "*.pem" in _text(root, ".sleuth.toml") and "import secrets" in _text(root, "app.py")


def test_other_edits_of_the_configuration_files_go_through(root: str) -> None:
    os.symlink("pyproject.toml", os.path.join(root, "alias.toml"))
    with Workbench(root, build_index=False) as wb:
        wb.replace(wb.search("1.0", path="pyproject.toml").matches[0]["ref"]["match"], "2.0")
        wb.replace(wb.search("# the rules").matches[0]["ref"]["match"], "# ours")
        assert 'version = "2.0"' in _text(root, "pyproject.toml")
        assert _text(root, ".sleuth.toml").startswith("# ours\n")
        # through a symlink the target's rules hold
        with pytest.raises(UnsafeSelection):
            wb.replace(wb.search("secrets/", path="alias.toml").matches[0]["ref"]["match"], "x/")
        assert wb.search('"secrets = 1"').total == 0  # still cloaked
