"""Fetch and unpack the benchmark corpora; print the path of each unpacked tree.

Usage::

    python benchmarks/corpora.py django          # Django 5.2.x sdist (pip download), ~7k files
    python benchmarks/corpora.py kernel          # linux-source-6.1 (Debian apt), ~75k files, ~1.2 GB
    python benchmarks/corpora.py django kernel

Both go to the shared corpus cache (``$SLEUTH_CORPUS_DIR`` or ``~/.cache/sleuth/corpora``), the
same one the test fixture ``tests/corpus.py`` uses, and are fetched only once.

Kernel: ``apt-get install linux-source-6.1`` (run as root; ``apt-get update`` first) provides
``/usr/src/linux-source-6.1.tar.xz``, which is unpacked once into ``<cache>/linux-6.1``. Debian
appends a block to the tree's root ``.gitignore`` that ignores *everything* at the top level
(``/*`` then ``!/debian/``, because its packaging repository holds only ``debian/``). Any tool that
honours ``.gitignore`` would then search nothing, so the unpacked copy has that Debian block cut
off; the upstream kernel rules above it (``.*``, ``*.o``, ...) and every nested ``.gitignore``
stay, and sleuth and rg apply them alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpus import cache_dir, django_tree, locked, publish_dir  # noqa: E402

__all__ = ["django_tree", "kernel_tree", "neutralise_debian_gitignore"]

KERNEL_PACKAGE = "linux-source-6.1"
KERNEL_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
_KERNEL_DIR = "linux-6.1"
_DEBIAN_MARKER = "# Debian packaging"


def neutralise_debian_gitignore(tree: Path) -> bool:
    """Cut Debian's ignore-everything block off ``tree/.gitignore``; True if it was there."""
    gitignore = tree / ".gitignore"
    if not gitignore.is_file():
        return False
    lines = gitignore.read_text(encoding="utf-8").splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(_DEBIAN_MARKER):
            # Drop the marker's comment block too (the "#" line just before it, if any).
            cut = i - 1 if i > 0 and lines[i - 1].strip() == "#" else i
            gitignore.write_text("".join(lines[:cut]).rstrip("\n") + "\n", encoding="utf-8")
            return True
    return False


def _ensure_kernel_tarball() -> Path:
    if KERNEL_TARBALL.is_file():
        return KERNEL_TARBALL
    if os.geteuid() != 0:
        raise SystemExit(f"{KERNEL_TARBALL} is missing; run: sudo apt-get install {KERNEL_PACKAGE}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-q", KERNEL_PACKAGE], check=True, env=env)
    if not KERNEL_TARBALL.is_file():
        raise SystemExit(f"apt-get installed {KERNEL_PACKAGE} but {KERNEL_TARBALL} is missing")
    return KERNEL_TARBALL


def kernel_tree() -> Path:
    """Return the unpacked linux-source-6.1 tree, installing and unpacking it on first use."""
    final = cache_dir() / _KERNEL_DIR
    tree = final / "linux-source-6.1"
    if tree.is_dir():
        return tree
    with locked(_KERNEL_DIR):
        if tree.is_dir():
            return tree
        tarball = _ensure_kernel_tarball()
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{_KERNEL_DIR}-", dir=cache_dir()))
        try:
            print(f"unpacking {tarball} (a few minutes) ...", file=sys.stderr)
            # tar(1) is much faster than tarfile on a 140 MB .xz; keep symlinks as they are.
            subprocess.run(["tar", "-xJf", str(tarball), "-C", str(tmp)], check=True)
            if not (tmp / "linux-source-6.1").is_dir():
                raise RuntimeError(f"{tarball} has no linux-source-6.1/ top folder")
            neutralise_debian_gitignore(tmp / "linux-source-6.1")
            publish_dir(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return tree


def _count(tree: Path) -> tuple[int, int]:
    files = size = 0
    for dirpath, _dirs, names in os.walk(tree):
        for name in names:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                files += 1
                size += os.path.getsize(p)
    return files, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="+", choices=["django", "kernel"])
    parser.add_argument("--stats", action="store_true", help="also count files and bytes")
    args = parser.parse_args(argv)
    for name in args.corpus:
        tree = django_tree() if name == "django" else kernel_tree()
        if args.stats:
            files, size = _count(tree)
            print(f"{name}\t{tree}\t{files} files\t{size / 1e6:.1f} MB")
        else:
            print(tree)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
