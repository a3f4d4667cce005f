"""Real code in 17 languages for the structural-search (``ast:``) parity tests and benchmark.

Every corpus comes from a package registry through its ordinary client, is fetched once and
cached under ``$SLEUTH_CORPUS_DIR`` or ``~/.cache/sleuth/corpora`` (the cache of
``tests/corpus.py``, whose lock and atomic-publish helpers are reused here):

========== ============================================== ==============================================
language   corpus                                         how it is fetched
========== ============================================== ==============================================
Python     Django 5.2.x sdist (about 2,800 ``.py`` files) ``pip download --no-binary :all:`` (corpus.py)
TypeScript rxjs 7.8.2, ``package/src`` (251 ``.ts`` files) ``npm pack rxjs@7.8.2``
Rust       tokio crate sources (420 ``.rs`` files)        ``apt-get download librust-tokio-dev`` +
                                                          ``dpkg-deb -x`` (Debian ships crate sources)
C          psutil 7.2.2 sdist (103 ``.c``/``.h`` files)   ``pip download --no-binary :all: psutil``
CSS        the Django sdist's stylesheets (47 ``.css``)    the Django corpus above
HTML       the Django sdist's templates (368 ``.html``)   the Django corpus above
JSON       the Django sdist's fixtures (54 ``.json``)     the Django corpus above
YAML       ansible-core 2.18.6 sdist, its integration      ``pip download --no-binary :all:
           test targets (1,705 ``.yml``/``.yaml``)        ansible-core``
Solidity   @openzeppelin/contracts 5.4.0 (207 ``.sol``)   ``npm pack @openzeppelin/contracts@5.4.0``
Elixir     Elixir 1.14.0's own ``lib/`` (534 ``.ex``/      ``apt-get source --download-only
           ``.exs``)                                      elixir-lang=1.14.0.dfsg-2`` (Debian)
Haskell    aeson 2.0.3.0 (51 ``.hs``)                     Debian source ``haskell-aeson=2.0.3.0-1``
Nix        Nix 2.8.0's sources (213 ``.nix``)             Debian source ``nix=2.8.0-1.1``
Markdown   Nix 2.8.0's manual, ``doc/`` (115 ``.md``)      the Nix corpus above
Scala      Scala 2.11.12's ``src/library`` (579           Debian source ``scala=2.11.12-5``
           ``.scala``)
HCL        HCL 2.14.1's test fixtures (52 ``.hcl``)       Debian source
                                                          ``golang-github-hashicorp-hcl-v2=2.14.1-2``
Kotlin     react-native-screens 4.30.1's Android code     ``npm pack react-native-screens@4.30.1``
           (240 ``.kt``)
Zig        Zig 0.17.1's standard library (about 560       the ``ziglang`` wheel (``pip download
           ``.zig``)                                      --only-binary :all:``), its ``lib/std``
========== ============================================== ==============================================

Why these: each is moderate (under 4 MB of source, so a parity pattern over all of it runs in
seconds) and is real, idiomatic code of its language. rxjs rather than zod or TypeScript itself:
TypeScript is too big, and zod uses variance annotations (``<in T>``) that the PyPI TypeScript
grammar cannot parse while ast-grep's bundled one can, so the two engines would see different
trees. psutil rather than the kernel: the kernel is a 140 MB download; psutil's C (Linux, BSD,
macOS, Windows, AIX and SunOS back ends) is plain C with the usual macros.
react-native-screens for Kotlin: a React Native library's Android side is Kotlin, so npm has a
small current Kotlin tree (240 files, 1.4 MB) where Debian's Kotlin source is the compiler.

``apt-get download`` needs package lists: when it fails, ``apt-get update`` is run once (as
root) and the download retried. The ``.deb`` is unpacked with ``dpkg-deb -x`` into a private
folder; no package is installed.

Debian source packages (``apt-get source --download-only PKG=VERSION``) need ``deb-src``
lists, which the machine's apt configuration may not have: ``_apt_source`` writes a private
apt configuration under ``<cache>/.apt-src/`` (the ``deb-src`` twin of each Debian ``deb``
entry of ``/etc/apt/sources.list{,.d/}``, same archive, suites and keyring), updates its own
package lists there once and downloads into a private folder; the system's lists and cache are
not touched. Only the upstream tarball (``*.orig.tar.*``) is unpacked, with ``tarfile``; no
package is built. Every corpus is pinned to one version, so CI sees the same files.

Concurrency (pytest-xdist, several test runs): each fetch holds an exclusive ``fcntl`` lock on
``<cache>/.<name>.lock``, unpacks into a private temporary folder and publishes it with one atomic
``os.rename``; a half-unpacked tree is never visible under its final name. Run this file as a
script to fetch everything and print the trees: ``python tests/ast_corpora.py``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

__all__ = [
    "Corpus",
    "CORPORA",
    "RXJS_SPEC",
    "TOKIO_PACKAGE",
    "PSUTIL_SPEC",
    "ANSIBLE_SPEC",
    "OPENZEPPELIN_SPEC",
    "RN_SCREENS_SPEC",
    "DEBIAN_SOURCES",
    "ansible_tree",
    "cache_dir",
    "corpus",
    "debian_source_tree",
    "django_tree",
    "openzeppelin_tree",
    "psutil_tree",
    "rn_screens_tree",
    "rxjs_tree",
    "tokio_tree",
]

_HERE = Path(__file__).resolve().parent

#: npm package spec of the TypeScript corpus.
RXJS_SPEC = "rxjs@7.8.2"
#: Debian package carrying the tokio crate's sources (the Rust corpus).
TOKIO_PACKAGE = "librust-tokio-dev"
#: pip requirement of the C corpus (an sdist whose C sources are the extension module).
PSUTIL_SPEC = "psutil==7.2.2"
#: pip requirement of the YAML corpus (an sdist whose integration tests are YAML playbooks).
ANSIBLE_SPEC = "ansible-core==2.18.6"
#: npm package spec of the Solidity corpus.
OPENZEPPELIN_SPEC = "@openzeppelin/contracts@5.4.0"
#: npm package spec of the Kotlin corpus (a React Native library whose Android side is Kotlin).
RN_SCREENS_SPEC = "react-native-screens@4.30.1"
#: Debian source packages of the corpora fetched with ``apt-get source``: corpus -> (source
#: package, version, the upstream tarball's top folder).
DEBIAN_SOURCES: dict[str, tuple[str, str, str]] = {
    "elixir": ("elixir-lang", "1.14.0.dfsg-2", "elixir-1.14.0"),
    "aeson": ("haskell-aeson", "2.0.3.0-1", "aeson-2.0.3.0"),
    "nix": ("nix", "2.8.0-1.1", "nix-2.8.0"),
    "scala": ("scala", "2.11.12-5", "scala-2.11.12"),
    "hcl": ("golang-github-hashicorp-hcl-v2", "2.14.1-2", "hcl-2.14.1"),
}


def _corpus_module() -> ModuleType:
    """``tests/corpus.py``, loaded once under the name ``test_rg_parity`` also uses.

    The tests run with ``--import-mode=importlib`` (``tests/`` is not on ``sys.path``), so the
    module is loaded from its file, as the other corpus users do.
    """
    name = "sleuth_tests_corpus"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(name, _HERE / "corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def cache_dir() -> Path:
    """The shared corpus cache folder (created if missing)."""
    path: Path = _corpus_module().cache_dir()
    return path


def django_tree() -> Path:
    """The unpacked Django 5.2.x sdist (``tests/corpus.py``)."""
    path: Path = _corpus_module().django_tree()
    return path


def _run(cmd: list[str], cwd: Path) -> None:
    """Run a fetch command; on failure raise with its output (the fixture's error is the test's)."""
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} failed with exit code {proc.returncode}:\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )


def _fetch_once(name: str, build: Callable[[Path], None], tree_in: Callable[[Path], Path]) -> Path:
    """Fetch corpus ``name`` once: ``build(tmp)`` fills a private folder that is then published.

    ``tree_in(folder)`` locates the source tree inside the published folder (and checks it).
    """
    final = cache_dir() / name
    if final.is_dir():
        return tree_in(final)
    with _corpus_module().locked(name):
        if final.is_dir():  # another process finished while this one waited for the lock
            return tree_in(final)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{name}-", dir=cache_dir()))
        try:
            build(tmp)
            tree_in(tmp)  # refuse to publish a folder without the expected tree
            _corpus_module().publish_dir(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return tree_in(final)


def _unpack_tar(archive: Path, into: Path) -> None:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")


def _one(matches: list[Path], what: str, where: Path) -> Path:
    if len(matches) != 1 or not matches[0].is_dir():
        raise RuntimeError(f"expected one {what} in {where}, found {matches!r}")
    return matches[0]


# -- TypeScript: rxjs from npm ------------------------------------------------------------------


def _build_rxjs(tmp: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed (apt-get install npm)")
    work = tmp / ".download"
    work.mkdir()
    _run([npm, "pack", RXJS_SPEC, "--silent", "--pack-destination", str(work)], cwd=work)
    tarballs = sorted(work.glob("rxjs-*.tgz"))
    if len(tarballs) != 1:
        raise RuntimeError(f"npm pack {RXJS_SPEC} left {tarballs!r} in {work}")
    _unpack_tar(tarballs[0], tmp)
    shutil.rmtree(work)


def rxjs_tree() -> Path:
    """The unpacked rxjs npm package (``package/``); its TypeScript sources are in ``src/``."""

    def tree_in(folder: Path) -> Path:
        tree = folder / "package"
        if not (tree / "src").is_dir():
            raise RuntimeError(f"{tree} has no src/ folder")
        return tree

    return _fetch_once("rxjs-7.8.2", _build_rxjs, tree_in)


# -- Rust: tokio from Debian ---------------------------------------------------------------------


def _apt_download(package: str, into: Path) -> Path:
    """``apt-get download PACKAGE`` into ``into``; one ``apt-get update`` if the lists are stale."""
    apt = shutil.which("apt-get")
    if apt is None:
        raise RuntimeError("apt-get is not available: the Rust corpus comes from Debian")
    cmd = [apt, "download", "-q", package]
    proc = subprocess.run(cmd, cwd=into, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        if os.geteuid() != 0:
            raise RuntimeError(f"apt-get download {package} failed (run as root?): {proc.stderr}")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run([apt, "update", "-q"], check=True, env=env, capture_output=True)
        _run(cmd, cwd=into)
    debs = sorted(into.glob(f"{package}_*.deb"))
    if len(debs) != 1:
        raise RuntimeError(f"apt-get download {package} left {debs!r} in {into}")
    return debs[0]


def _build_tokio(tmp: Path) -> None:
    work = tmp / ".download"
    work.mkdir()
    deb = _apt_download(TOKIO_PACKAGE, work)
    _run(["dpkg-deb", "-x", str(deb), str(tmp / "root")], cwd=tmp)
    shutil.rmtree(work)


def tokio_tree() -> Path:
    """The tokio crate's sources as Debian ships them (``tokio-1.x/`` with ``src/``, ``tests/``)."""

    def tree_in(folder: Path) -> Path:
        registry = folder / "root" / "usr" / "share" / "cargo" / "registry"
        return _one(sorted(registry.glob("tokio-*")), "tokio crate", registry)

    return _fetch_once("librust-tokio-dev", _build_tokio, tree_in)


# -- C: psutil from PyPI -------------------------------------------------------------------------


def _build_psutil(tmp: Path) -> None:
    work = tmp / ".download"
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--no-binary",
        ":all:",
        "--dest",
        str(work),
        PSUTIL_SPEC,
    ]
    work.mkdir()
    _run(cmd, cwd=tmp)
    archives = sorted(work.glob("psutil-*.tar.gz"))
    if len(archives) != 1:
        raise RuntimeError(f"pip download {PSUTIL_SPEC} left {archives!r} in {work}")
    _unpack_tar(archives[0], tmp)
    shutil.rmtree(work)


def psutil_tree() -> Path:
    """The unpacked psutil sdist (``psutil-7.2.2/``); its C sources are under ``psutil/``."""

    def tree_in(folder: Path) -> Path:
        return _one(sorted(folder.glob("psutil-*")), "psutil sdist", folder)

    return _fetch_once("psutil-7.2.2", _build_psutil, tree_in)


# -- YAML: ansible-core from PyPI ------------------------------------------------------------------


def _pip_sdist(spec: str, prefix: str, tmp: Path) -> None:
    """``pip download`` the sdist ``spec`` and unpack it into ``tmp``."""
    work = tmp / ".download"
    _corpus_module().pip_download_sdist(spec, work)
    archives = sorted(work.glob(f"{prefix}-*.tar.gz"))
    if len(archives) != 1:
        raise RuntimeError(f"pip download {spec} left {archives!r} in {work}")
    _unpack_tar(archives[0], tmp)
    shutil.rmtree(work)


def ansible_tree() -> Path:
    """The unpacked ansible-core sdist (``ansible_core-2.18.6/``)."""

    def tree_in(folder: Path) -> Path:
        return _one(sorted(folder.glob("ansible_core-*")), "ansible-core sdist", folder)

    return _fetch_once(
        "ansible-core-2.18.6", lambda tmp: _pip_sdist(ANSIBLE_SPEC, "ansible_core", tmp), tree_in
    )


# -- Solidity: OpenZeppelin Contracts from npm --------------------------------------------------


def _npm_pack(spec: str, glob: str, tmp: Path) -> None:
    """``npm pack`` the package ``spec`` and unpack its tarball into ``tmp``."""
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed (apt-get install npm)")
    work = tmp / ".download"
    work.mkdir()
    _run([npm, "pack", spec, "--silent", "--pack-destination", str(work)], cwd=work)
    tarballs = sorted(work.glob(glob))
    if len(tarballs) != 1:
        raise RuntimeError(f"npm pack {spec} left {tarballs!r} in {work}")
    _unpack_tar(tarballs[0], tmp)
    shutil.rmtree(work)


def _npm_package_tree(folder: str, spec: str, tarball: str, marker: str) -> Path:
    """The ``package/`` folder of npm package ``spec`` (tarball ``tarball``, a glob), fetched
    once into ``folder``; it must hold the folder ``marker``."""

    def tree_in(unpacked: Path) -> Path:
        tree = unpacked / "package"
        if not (tree / marker).is_dir():
            raise RuntimeError(f"{tree} has no {marker}/ folder")
        return tree

    return _fetch_once(folder, lambda tmp: _npm_pack(spec, tarball, tmp), tree_in)


def openzeppelin_tree() -> Path:
    """The unpacked @openzeppelin/contracts npm package (``package/``, its ``.sol`` sources)."""
    return _npm_package_tree(
        "openzeppelin-contracts-5.4.0", OPENZEPPELIN_SPEC, "openzeppelin-contracts-*.tgz", "token"
    )


def rn_screens_tree() -> Path:
    """The unpacked react-native-screens npm package (``package/``, Kotlin under ``android/``)."""
    return _npm_package_tree(
        "react-native-screens-4.30.1", RN_SCREENS_SPEC, "react-native-screens-*.tgz", "android"
    )


# -- Zig: the standard library inside the ziglang wheel ------------------------------------------

ZIGLANG_SPEC = "ziglang==0.17.1"


def _build_zig_std(tmp: Path) -> None:
    """``pip download`` the ziglang wheel (the Zig toolchain, packaged for PyPI) and take the
    standard library's sources, ``ziglang/lib/std/``, out of it."""
    work = tmp / ".download"
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
    cmd += ["--no-deps", "--only-binary", ":all:", "--dest", str(work), ZIGLANG_SPEC]
    subprocess.run(cmd, check=True)
    wheels = sorted(work.glob("ziglang-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"pip download {ZIGLANG_SPEC} left {wheels!r} in {work}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        members = [m for m in wheel.namelist() if m.startswith("ziglang/lib/std/")]
        wheel.extractall(tmp, members)
    shutil.rmtree(work)


def zig_std_tree() -> Path:
    """Zig 0.17.1's standard library (``ziglang/lib/std/``, about 560 ``.zig`` files)."""

    def tree_in(folder: Path) -> Path:
        tree = folder / "ziglang" / "lib" / "std"
        if not tree.is_dir():
            raise RuntimeError(f"no ziglang/lib/std in {folder}")
        return tree

    return _fetch_once("ziglang-0.17.1", _build_zig_std, tree_in)


# -- Debian source packages: Elixir, Haskell, Nix, Scala, HCL -----------------------------------

_SYSTEM_SOURCES = Path("/etc/apt")


def _deb_src_entries() -> str:
    """The ``deb-src`` twin of every Debian ``deb`` entry of the system's apt sources, as one
    deb822 text (an entry is Debian's when it is signed by the Debian archive keyring)."""
    stanzas: list[str] = []
    parts = _SYSTEM_SOURCES / "sources.list.d"
    for path in sorted(parts.glob("*.sources")) if parts.is_dir() else []:
        for stanza in path.read_text(encoding="utf-8").split("\n\n"):
            fields = {}
            for line in stanza.splitlines():
                key, sep, value = line.partition(":")
                if sep and not line.startswith((" ", "#")):
                    fields[key.strip().lower()] = value.strip()
            if "deb" in fields.get("types", "").split() and "debian" in fields.get("signed-by", ""):
                stanzas.append(
                    "Types: deb-src\n"
                    + "".join(
                        f"{key}: {fields[key.lower()]}\n"
                        for key in ("URIs", "Suites", "Components", "Signed-By")
                        if key.lower() in fields
                    )
                )
    lists = [_SYSTEM_SOURCES / "sources.list", *sorted(parts.glob("*.list"))]
    for path in (p for p in lists if p.is_file()):
        for line in path.read_text(encoding="utf-8").splitlines():
            words = line.split()
            if len(words) >= 4 and words[0] == "deb" and "/debian" in line:
                stanzas.append(
                    f"Types: deb-src\nURIs: {words[-3]}\nSuites: {words[-2]}\n"
                    f"Components: {words[-1]}\n"
                )
    if not stanzas:
        raise RuntimeError("no Debian entry in the apt sources: the corpus comes from Debian")
    return "\n".join(stanzas)


def _apt_src_options(refresh: bool = False) -> list[str]:
    """apt options for the private ``deb-src`` configuration (lists fetched once, locked;
    ``refresh`` fetches them again)."""
    root = cache_dir() / ".apt-src"
    options = [
        "-o",
        f"Dir::Etc::SourceList={root / 'none.list'}",
        "-o",
        f"Dir::Etc::SourceParts={root / 'sources.list.d'}",
        "-o",
        f"Dir::State::Lists={root / 'lists'}",
        "-o",
        f"Dir::Cache={root / 'cache'}",
    ]
    with _corpus_module().locked("apt-src"):
        if refresh or not (root / "ready").is_file():
            for sub in ("sources.list.d", "lists/partial", "cache/archives/partial"):
                (root / sub).mkdir(parents=True, exist_ok=True)
            (root / "none.list").write_text("", encoding="utf-8")
            (root / "sources.list.d" / "debian-src.sources").write_text(
                _deb_src_entries(), encoding="utf-8"
            )
            apt = shutil.which("apt-get")
            if apt is None:
                raise RuntimeError("apt-get is not available: the corpus comes from Debian")
            _run([apt, "-q", *options, "update"], cwd=root)
            (root / "ready").write_text("", encoding="utf-8")
    return options


def _build_debian_source(name: str, tmp: Path) -> None:
    package, version, _top = DEBIAN_SOURCES[name]
    apt = shutil.which("apt-get")
    if apt is None:
        raise RuntimeError("apt-get is not available: the corpus comes from Debian")
    work = tmp / ".download"
    work.mkdir()
    source = ["-q", "source", "--download-only", f"{package}={version}"]
    try:
        _run([apt, *_apt_src_options(), *source], cwd=work)
    except RuntimeError:  # lists older than the archive: fetch them again, once
        _run([apt, *_apt_src_options(refresh=True), *source], cwd=work)
    upstream = version.rsplit("-", 1)[0]
    archives = sorted(work.glob(f"{package}_{upstream}.orig.tar.*"))
    if len(archives) != 1:
        raise RuntimeError(f"apt-get source {package}={version} left {archives!r} in {work}")
    _unpack_tar(archives[0], tmp)
    shutil.rmtree(work)


def debian_source_tree(name: str) -> Path:
    """The upstream sources of the Debian source package of corpus ``name``
    (``DEBIAN_SOURCES``)."""
    package, version, top = DEBIAN_SOURCES[name]

    def tree_in(folder: Path) -> Path:
        return _one([folder / top], f"{package} {version} sources", folder)

    return _fetch_once(
        f"debian-src-{package}-{version}", lambda tmp: _build_debian_source(name, tmp), tree_in
    )


# -- the table -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    """One corpus: its language (sleuth's and ast-grep's name), how to fetch it, where to look."""

    name: str
    lang: str
    fetch: Callable[[], Path]
    scope: str  # the sub-folder holding the sources ("" = the whole tree)
    min_files: int  # a sanity floor for the number of source files in ``scope``


CORPORA: dict[str, Corpus] = {
    c.name: c
    for c in (
        Corpus("django", "python", django_tree, "", 2500),
        Corpus("rxjs", "typescript", rxjs_tree, "src", 200),
        Corpus("tokio", "rust", tokio_tree, "", 300),
        Corpus("psutil", "c", psutil_tree, "psutil", 80),
        Corpus("django-css", "css", django_tree, "", 40),
        Corpus("django-html", "html", django_tree, "", 300),
        Corpus("django-json", "json", django_tree, "", 40),
        Corpus("ansible", "yaml", ansible_tree, "test/integration/targets", 1500),
        Corpus("openzeppelin", "solidity", openzeppelin_tree, "", 200),
        Corpus("elixir", "elixir", lambda: debian_source_tree("elixir"), "lib", 500),
        Corpus("aeson", "haskell", lambda: debian_source_tree("aeson"), "", 45),
        Corpus("nix", "nix", lambda: debian_source_tree("nix"), "", 200),
        Corpus("nix-manual", "markdown", lambda: debian_source_tree("nix"), "doc", 100),
        Corpus("scala", "scala", lambda: debian_source_tree("scala"), "src/library", 500),
        Corpus("hcl", "hcl", lambda: debian_source_tree("hcl"), "", 45),
        Corpus("rn-screens", "kotlin", rn_screens_tree, "android", 200),
        Corpus("zig-std", "zig", zig_std_tree, "", 400),
    )
}


def corpus(name: str) -> Path:
    """Fetch (once) and return the tree of corpus ``name`` (a key of ``CORPORA``)."""
    return CORPORA[name].fetch()


if __name__ == "__main__":
    for key, entry in CORPORA.items():
        print(f"{key}\t{entry.lang}\t{corpus(key)}")
