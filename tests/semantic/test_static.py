"""The static token table (sleuth/semantic/static.py): weights, distillation, the cache file,
encoding, and the index format naming the encoder (docs/query.md#semantic-hybrid-retrieval).

A fake model stands in for MiniLM where the table is computed (the real distillation runs every
vocabulary token through the network, about a minute); the last tests use the real table."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from sleuth.semantic import static
from sleuth.semantic.encoder import VOCAB
from sleuth.semantic.static import (
    TABLE_DIM,
    StaticEncoder,
    distill_table,
    split_words,
    token_weights,
)
from sleuth.semantic.store import FILE_NAME, FileRow, IndexedChunk, SemanticStore, format_of
from sleuth.semantic.tokens import Segmenter

WIDTH = 300


class FakeModel:
    """Deterministic token states (a fixed random row per id) and a fixed digest."""

    def __init__(self) -> None:
        self.calls = 0
        self._rows = np.random.default_rng(7).standard_normal((30522, WIDTH)).astype(np.float32)

    def digest(self) -> str:
        return "f" * 64

    def token_states(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        self.calls += 1
        return self._rows[ids]


def _encoder(tmp_path: Path, model: FakeModel, **kw: Any) -> StaticEncoder:
    return StaticEncoder(cache=tmp_path / "cache", model=model, **kw)  # type: ignore[arg-type]


def test_split_words_cuts_identifiers() -> None:
    assert split_words("getUserName(user_id)") == "get User Name(user id)"
    assert split_words("HTTPServer") == "HTTP Server"
    seg = Segmenter(["pop", "item", "list"])
    assert split_words("x.popitemlist(Popitemlist)", seg) == "x.pop item list(pop item list)"
    assert split_words("x.popitemlist()") == "x.popitemlist()"


def test_token_weights_zero_reserved_and_punctuation() -> None:
    vocab = VOCAB.read_text(encoding="utf-8").splitlines()
    weights = token_weights(vocab)
    at = {piece: i for i, piece in enumerate(vocab)}
    assert weights[at["[CLS]"]] == weights[at["[unused0]"]] == 0.0
    assert weights[at["("]] == weights[at["_"]] == weights[at["##."]] == 0.0
    assert 0 < weights[at["the"]] < weights[at["configuration"]]
    assert (weights >= 0).all() and len(weights) == len(vocab)


def test_distill_table_is_centred_pca_with_progress() -> None:
    rows = np.random.default_rng(1).standard_normal((50, 8)).astype(np.float32)
    seen: list[tuple[int, int]] = []
    table = distill_table(
        lambda ids: rows[ids], 50, 3, batch=20, progress=lambda d, t: seen.append((d, t))
    )
    assert table.shape == (50, 3) and table.dtype == np.float32
    assert np.allclose(table.mean(axis=0), 0, atol=1e-5)
    spread = table.var(axis=0)
    assert spread[0] >= spread[1] >= spread[2]  # principal axes, the widest first
    assert seen == [(20, 50), (40, 50), (50, 50)]


def test_table_computed_once_then_loaded_from_the_cache(tmp_path: Path) -> None:
    model = FakeModel()
    told: list[tuple[int, int]] = []
    first = _encoder(tmp_path, model, progress=lambda d, t: told.append((d, t)))
    a = first.encode(["parse the configuration file"])
    assert model.calls > 0 and told[-1] == (30522, 30522)
    files = list((tmp_path / "cache").glob("*.npy"))
    assert len(files) == 1 and "ffffffff" in files[0].name
    assert not list((tmp_path / "cache").glob("*.tmp"))
    calls = model.calls
    second = _encoder(tmp_path, model)
    b = second.encode(["parse the configuration file"])
    assert model.calls == calls  # loaded, not computed again
    assert np.allclose(a, b, atol=1e-2)  # the cache keeps float16


def test_a_bad_cache_file_is_computed_again(tmp_path: Path) -> None:
    model = FakeModel()
    _encoder(tmp_path, model).encode(["x y z"])
    (path,) = (tmp_path / "cache").glob("*.npy")
    path.write_bytes(b"not a table")
    calls = model.calls
    out = _encoder(tmp_path, model).encode(["x y z"])
    assert model.calls > calls and out.shape == (1, TABLE_DIM)
    assert np.load(path).shape == (30522, TABLE_DIM)


def test_encode_rows(tmp_path: Path) -> None:
    enc = _encoder(tmp_path, FakeModel())
    texts = ["getUserName", "get_user_name", "", "(){}[]::", "load config " * 400]
    out = enc.encode(texts)
    assert out.shape == (5, TABLE_DIM) and out.dtype == np.float32
    norms = np.linalg.norm(out, axis=1)
    assert np.allclose(norms[[0, 1, 4]], 1.0, atol=1e-5)
    assert norms[2] == norms[3] == 0.0  # nothing weighted: a zero row, not NaN
    assert np.allclose(out[0], out[1], atol=1e-6)  # camelCase and snake_case read alike
    assert enc.encode([]).shape == (0, TABLE_DIM)
    # more texts than one slice: each row is the row of that text alone
    many = [f"word{i} value" for i in range(300)]
    together = enc.encode(many)
    assert np.allclose(together[299], enc.encode([many[299]])[0], atol=1e-6)


def _row(path: str, dim: int) -> FileRow:
    chunk = IndexedChunk(0, 5, 1, 1, "function", "f", {"f": 1}, 1, "d")
    return FileRow(path, 5, 1, "stamp", [chunk], np.ones((1, dim), dtype=np.float32))


def test_store_of_another_encoder_is_rebuilt(tmp_path: Path) -> None:
    store = SemanticStore(tmp_path, "model-a/1", 4)
    store.write([_row("a.py", 4)], [])
    assert set(store.load()) == {"a.py"}
    store.close()
    assert set(SemanticStore(tmp_path, "model-a/1", 4).load()) == {"a.py"}
    other = SemanticStore(tmp_path, "model-b/1", 4)
    assert other.load() == {}
    other.close()
    assert format_of("model-a/1", 4) != format_of("model-a/1", 8)


def test_index_of_the_minilm_format_is_rebuilt_not_misread(tmp_path: Path) -> None:
    # a file as format 2 wrote it: 384 float16 per chunk, another model's vectors
    db = sqlite3.connect(tmp_path / FILE_NAME)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute(
        "CREATE TABLE files (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER"
        " NOT NULL, stamp TEXT NOT NULL, chunks BLOB NOT NULL, vectors BLOB NOT NULL)"
    )
    db.execute("INSERT INTO meta VALUES ('format', '2/all-MiniLM-L6-v2-onnx-int8/1/marshal-4')")
    db.execute(
        "INSERT INTO files VALUES ('old.py', 1, 1, 's', x'', ?)",
        (np.zeros(384, dtype=np.float16).tobytes(),),
    )
    db.commit()
    db.close()
    store = SemanticStore(tmp_path, static.STATIC_ID, TABLE_DIM)
    assert store.load() == {}
    store.close()


@pytest.mark.parametrize(
    ("query", "good", "bad"),
    [
        ("read the configuration file", "def load_config_file(path):", "def send_email(to):"),
        ("close the network connection", "def closeSocket(conn):", "def parse_date(text):"),
    ],
)
def test_real_table_ranks_related_code_higher(query: str, good: str, bad: str) -> None:
    enc = StaticEncoder()  # the real table, from the installed model wheel
    q, g, b = enc.encode([query, good, bad])
    assert float(q @ g) > float(q @ b)
