"""Real-world corpora for the end-to-end tests: the Django 5.2.x sdist, fetched once and cached.

``django_tree()`` downloads the sdist with pip (``pip download --no-deps --no-binary :all:``),
unpacks it and returns the unpacked source tree. The cache lives in ``$SLEUTH_CORPUS_DIR`` or, by
default, ``~/.cache/sleuth/corpora`` so that fresh clones on the same machine (CI) reuse it.

Concurrency: several pytest-xdist workers (or several test runs) may call ``django_tree()`` at the
same time. The first one takes an exclusive ``fcntl`` lock, downloads and unpacks into a private
temporary folder and publishes it with one atomic ``os.rename``; the others wait on the lock and
then find the finished tree. A half-unpacked tree is never visible under the final name.

The benchmarks (``benchmarks/corpora.py``) share this cache and this code.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["DJANGO_SPEC", "cache_dir", "django_tree", "locked", "publish_dir"]

#: The pip requirement for the Django corpus: the newest 5.2.x sdist.
DJANGO_SPEC = "django>=5.2,<5.3"
_DJANGO_DIR = "django-5.2"


def cache_dir() -> Path:
    """The corpus cache folder (created if missing)."""
    env = os.environ.get("SLEUTH_CORPUS_DIR")
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "sleuth" / "corpora"
    base.mkdir(parents=True, exist_ok=True)
    return base


@contextmanager
def locked(name: str) -> Iterator[None]:
    """Hold an exclusive inter-process lock on ``<cache>/.<name>.lock`` for the block."""
    lock_path = cache_dir() / f".{name}.lock"
    with open(lock_path, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def publish_dir(tmp: Path, final: Path) -> None:
    """Atomically move the finished folder ``tmp`` to ``final`` (same file system)."""
    os.rename(tmp, final)


def _single_child(folder: Path) -> Path:
    children = list(folder.iterdir())
    if len(children) != 1 or not children[0].is_dir():
        raise RuntimeError(f"expected one top folder in {folder}, found {children!r}")
    return children[0]


def pip_download_sdist(spec: str, dest: Path) -> None:
    """``pip download`` the source distribution ``spec`` (no dependencies) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
    cmd += ["--no-deps", "--no-binary", ":all:", "--dest", str(dest), spec]
    subprocess.run(cmd, check=True)


def _download_django_sdist(dest: Path) -> Path:
    """Run ``pip download`` for the Django sdist into ``dest`` and return the archive."""
    pip_download_sdist(DJANGO_SPEC, dest)
    archives = sorted(dest.glob("[Dd]jango-5.2*.tar.gz"))
    if not archives:
        raise RuntimeError(f"pip download left no Django sdist in {dest}")
    return archives[-1]


def _unpack(archive: Path, into: Path) -> None:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")


def django_tree() -> Path:
    """Return the unpacked Django 5.2.x sdist tree, downloading it on first use."""
    final = cache_dir() / _DJANGO_DIR
    if final.is_dir():
        return _single_child(final)
    with locked(_DJANGO_DIR):
        if final.is_dir():  # another process finished while we waited for the lock
            return _single_child(final)
        archive = _download_django_sdist(cache_dir() / "downloads")
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{_DJANGO_DIR}-", dir=cache_dir()))
        try:
            _unpack(archive, tmp)
            _single_child(tmp)
            publish_dir(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return _single_child(final)


if __name__ == "__main__":
    print(django_tree())
