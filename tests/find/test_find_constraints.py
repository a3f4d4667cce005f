"""Inline constraints of a find query (sleuth/find/constraints.py)."""

from __future__ import annotations

import pytest

from sleuth.errors import InvalidQuery
from sleuth.find.constraints import parse_constraints, parse_ext

PATHS = [
    "src/app.py",
    "src/lib/core.rs",
    "src/lib/view.ts",
    "src/lib/view.tsx",
    "tests/test_app.py",
    "docs/notes.md",
    "vendor/src/x.py",
]


def kept(query: str, *, grep: bool = False, ext: str | None = None) -> list[str]:
    keep = parse_constraints(query, grep=grep, ext=ext).matcher()
    return [p for p in PATHS if keep(p)]


def test_files_mode_reads_every_token_and_the_rest_is_the_needle() -> None:
    cons = parse_constraints("*.rs user src/ !tests/ core", grep=False)
    assert cons.needle == "user core"
    assert (cons.globs, cons.folders, cons.exclude) == (("*.rs",), ("src/",), ("tests/",))


def test_grep_mode_takes_only_leading_constraints_and_keeps_the_text_as_written() -> None:
    cons = parse_constraints("*.py  src/   TODO  src/ *.rs", grep=True)
    assert cons.needle == "TODO  src/ *.rs"
    assert (cons.globs, cons.folders) == (("*.py",), ("src/",))
    plain = parse_constraints("  spaced text ", grep=True)
    assert plain.needle == "  spaced text " and plain.globs == ()


def test_a_bang_word_is_an_exclusion_only_in_files_mode() -> None:
    assert parse_constraints("!important", grep=True).needle == "!important"
    assert parse_constraints("!tests/ foo", grep=True).exclude == ("tests/",)
    files = parse_constraints("!test app", grep=False)
    assert files.exclude == ("test",) and files.needle == "app"
    assert kept("!test") == [p for p in PATHS if "test" not in p]


def test_globs_folders_and_exclusions_filter_paths() -> None:
    assert kept("*.{ts,tsx}") == ["src/lib/view.ts", "src/lib/view.tsx"]
    assert kept("*.py *.md") == [
        "src/app.py",
        "tests/test_app.py",
        "docs/notes.md",
        "vendor/src/x.py",
    ]
    # a folder matches a segment run anywhere, not only at the root
    assert kept("src/") == [
        "src/app.py",
        "src/lib/core.rs",
        "src/lib/view.ts",
        "src/lib/view.tsx",
        "vendor/src/x.py",
    ]
    assert kept("src/lib/") == ["src/lib/core.rs", "src/lib/view.ts", "src/lib/view.tsx"]
    # kinds combine with AND
    assert kept("*.py src/") == ["src/app.py", "vendor/src/x.py"]
    assert kept("*.py !vendor/") == ["src/app.py", "tests/test_app.py"]
    assert kept("!*.py !*.ts*") == ["src/lib/core.rs", "docs/notes.md"]
    assert kept("src/**/*.rs") == ["src/lib/core.rs"]


def test_ext_is_an_extension_list() -> None:
    assert parse_ext("rs") == ("rs",)
    assert parse_ext(".rs, *.ts tsx") == ("rs", "ts", "tsx")
    assert parse_ext(["py", "pyi", "py"]) == ("py", "pyi")
    assert parse_ext(None) == ()
    assert kept("", ext="md,rs") == ["src/lib/core.rs", "docs/notes.md"]
    assert kept("src/", ext="py") == ["src/app.py", "vendor/src/x.py"]
    with pytest.raises(InvalidQuery, match="ext is a file extension"):
        parse_ext("src/*.rs")


def test_a_bad_glob_is_invalid_query_naming_it() -> None:
    with pytest.raises(InvalidQuery) as info:
        parse_constraints("*.{rs user", grep=False)
    assert info.value.details["glob"] == "*.{rs"


def test_constraints_json_lists_what_was_read() -> None:
    cons = parse_constraints("*.rs src/ !tests/ x", grep=False, path="src", ext="rs")
    assert cons.to_json() == {
        "path": "src",
        "globs": ["*.rs"],
        "folders": ["src/"],
        "ext": ["rs"],
        "exclude": ["tests/"],
    }
