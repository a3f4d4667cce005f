"""Ignore lines generated from git's glob syntax, checked against git itself.

``test_ignore_git.py`` draws whole lines from a list; here a line is built from the pieces of
the syntax (stars in runs, ``?``, classes of every shape, escapes, slashes, ``!`` and a
trailing ``/``), so the matcher's tables, its regexes and its RE2 lines with their literal
prefilter all meet shapes nobody listed. A differential run of this kind found three faults
the list did not: a literal taken across the optional ``/`` of a leading ``**/``, a class of
only ``/`` whose regex RE2 refused, and git's any-depth ``**`` right after a literal prefix.

One rule is left out on purpose: a line ending in an escaped slash (``foo\\/``) is a folder
pattern as in ripgrep, where git matches nothing (docs/faces.md#which-files-are-searched).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import needs_git
from .test_ignore_git import assert_lists_as_git

PIECES = [
    "a",
    "b",
    "x",
    ".",
    " ",
    "*",
    "**",
    "***",
    "/",
    "**/",
    "/**",
    "?",
    "[ab]",
    "[!a]",
    "[^b]",
    "[a-c]",
    "[/]",
    "[]a]",
    "[[:alpha:]]",
    "\\*",
    "\\a",
]

FILES = [
    "a",
    "b",
    "ab",
    "axb",
    "a.c",
    ".a",
    "ba",
    "a b",
    "[a]",
    "x/a",
    "x/ab",
    "x/y/ab",
    "a1/b",
    "ab/c",
    "b/a/b",
    "x/a.c",
    "c/x/y/z",
]


@st.composite
def lines(draw: st.DrawFn) -> str:
    body = "".join(draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=5)))
    if draw(st.booleans()) and not body.startswith("/"):
        body = "/" + body if draw(st.booleans()) else body
    if draw(st.integers(0, 5)) == 0:
        body += "/"
    if body.endswith("\\/"):  # ripgrep's folder rule, not git's (module docstring)
        body = body[:-2] + "/"
    return ("!" if draw(st.integers(0, 5)) == 0 else "") + body


@needs_git
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(st.sampled_from(FILES), min_size=3, max_size=12, unique=True),
    top=st.lists(lines(), min_size=1, max_size=3),
    nested=st.lists(lines(), max_size=2),
)
def test_generated_lines_equal_git(names: list[str], top: list[str], nested: list[str]) -> None:
    assert_lists_as_git(names, "\n".join(top), "\n".join(nested), "x")
