"""Static token vectors: the dense half of ``semantic:`` without running a network per chunk.

Running MiniLM over every chunk costs tens of milliseconds a chunk on a small CPU, minutes for
a large workspace (docs/query.md#semantic-hybrid-retrieval). Here, as model2vec does, every
WordPiece token of the model's vocabulary is run through MiniLM once
(``[CLS] token [SEP]``, the token position's last hidden state), the 30,522 rows are centred
and cut to ``TABLE_DIM`` dimensions by PCA, and a text's vector is the weighted mean of its
tokens' rows: a table look-up, thousands of chunks a second.

The table is *computed* from the installed model wheel, not downloaded: on first use it takes
about a minute (``progress`` is told how far), then it is kept in the user cache
(``$XDG_CACHE_HOME/sleuth/semantic/``, named by the model file's hash and ``STATIC_ID``) and
loaded in milliseconds. An unreadable or mismatched cache file is computed again; the file is
written to a temporary name and renamed, so two processes never see half of one.

Weights: a token's weight is ``log(1 + rank)`` with the rank taken from its id (the BERT
vocabulary lists whole words roughly by frequency after its ~2k reserved and one-character
entries: model2vec's Zipf weighting), and 0 for pieces with no letter or digit and for the
reserved entries, so the brackets and underscores of code do not pull every chunk one way.
Identifiers are cut at case changes and underscores before WordPiece (``getUserName`` ->
``get User Name``), as the BM25 tokens are, and a glued compound into the vocabulary's words
(``popitemlist`` -> ``pop item list``, ``tokens.Segmenter``), which WordPiece alone would cut
into meaningless pieces.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Sequence
from itertools import chain
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sleuth.semantic.encoder import VOCAB, Encoder, Vectors
from sleuth.semantic.tokens import Segmenter

__all__ = [
    "StaticEncoder",
    "STATIC_ID",
    "TABLE_DIM",
    "cache_dir",
    "distill_table",
    "token_weights",
    "split_words",
]

STATIC_ID = "minilm-l6-int8-static-pca256-zipf/1"
"""Part of the index's identity and of the cache file's name: bumped when the table changes."""
TABLE_DIM = 256
WORD_RANK_START = 1996
"""Where the whole words of the BERT uncased vocabulary start ("the"): ranks count from it."""
MAX_TOKENS = 512
"""Word pieces of a chunk that count: past it a chunk's mean hardly moves."""
_SLICE = 128  # texts summed at once: bounds the (tokens x TABLE_DIM) temporary
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_LETTERS = re.compile(r"[A-Za-z]{5,}")  # shorter runs are never cut (tokens.MIN_COMPOUND)

Progress = Callable[[int, int], None]
Forward = Callable[[npt.NDArray[np.int64]], Vectors]
"""Token ids (n,) -> their vectors (n, width): MiniLM run on each token alone."""


def split_words(text: str, segmenter: Segmenter | None = None) -> str:
    """``getUserName(user_id)`` -> ``get User Name(user id)``: WordPiece then sees words; with
    a ``segmenter``, ``popitemlist`` -> ``pop item list`` too."""
    text = _CAMEL.sub(" ", text).replace("_", " ")
    if segmenter is None:
        return text

    return _LETTERS.sub(lambda run: segmenter.spaced(run.group(0)), text)


def cache_dir() -> Path:
    """Where computed tables are kept (the same root as the MCP initialize cache)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sleuth" / "semantic"


def token_weights(vocab: Sequence[str]) -> npt.NDArray[np.float32]:
    """One weight per vocabulary entry (see the module docstring)."""
    ranks = np.maximum(np.arange(len(vocab), dtype=np.float64) - (WORD_RANK_START - 1), 1.0)
    weights = np.log1p(ranks)
    for i, piece in enumerate(vocab):
        if piece.startswith("[") or not any(ch.isalnum() for ch in piece):
            weights[i] = 0.0
    return weights.astype(np.float32)


def distill_table(
    forward: Forward,
    size: int,
    dim: int = TABLE_DIM,
    *,
    batch: int = 1024,
    progress: Progress | None = None,
) -> Vectors:
    """The (size, dim) table: ``forward`` over every token id, centred, PCA to ``dim``."""
    rows: list[Vectors] = []
    for at in range(0, size, batch):
        ids = np.arange(at, min(at + batch, size), dtype=np.int64)
        rows.append(np.asarray(forward(ids), dtype=np.float32))
        if progress is not None:
            progress(min(at + batch, size), size)
    states = np.concatenate(rows).astype(np.float64)
    centred = states - states.mean(axis=0)
    # the leading right singular vectors are the principal axes
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    table: Vectors = (centred @ axes[:dim].T).astype(np.float32)
    return table


def _read_table(path: Path, size: int, dim: int) -> Vectors | None:
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if data.shape != (size, dim) or not np.isfinite(data).all():
        return None
    table: Vectors = data.astype(np.float32)
    return table


def _write_table(path: Path, table: Vectors) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, table.astype(np.float16), allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class StaticEncoder:
    """Texts -> unit rows of ``TABLE_DIM`` by table look-up; the table is loaded (or computed
    from ``model`` and cached under ``cache``) on first ``encode``."""

    dim = TABLE_DIM
    model_id = STATIC_ID
    batch = 256

    def __init__(
        self,
        *,
        cache: Path | None = None,
        model: Encoder | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.cache = cache if cache is not None else cache_dir()
        self.progress = progress
        self._model = model
        self._table: Vectors | None = None
        self._weights: npt.NDArray[np.float32] | None = None
        self._tokenizer: object = None
        self._segmenter: Segmenter | None = None

    def _load(self) -> tuple[Vectors, npt.NDArray[np.float32]]:
        from tokenizers import BertWordPieceTokenizer

        vocab = VOCAB.read_text(encoding="utf-8").splitlines()
        model = self._model or Encoder()
        path = self.cache / f"{STATIC_ID.replace('/', '-')}-{model.digest()[:16]}.npy"
        table = _read_table(path, len(vocab), self.dim)
        if table is None:
            table = distill_table(model.token_states, len(vocab), self.dim, progress=self.progress)
            _write_table(path, table)
        tokenizer = BertWordPieceTokenizer(str(VOCAB), lowercase=True)
        tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer = tokenizer
        self._segmenter = Segmenter(vocab[WORD_RANK_START:])
        self._table, self._weights = table, token_weights(vocab)
        return self._table, self._weights

    def encode(self, texts: list[str]) -> Vectors:
        """Unit-length rows, one per text (a text with no weighted token gives a zero row)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        table, weights = (
            (self._table, self._weights)
            if self._table is not None and self._weights is not None
            else self._load()
        )
        for at in range(0, len(texts), _SLICE):
            part = [split_words(t, self._segmenter) for t in texts[at : at + _SLICE]]
            encoded = self._tokenizer.encode_batch(part, add_special_tokens=False)  # type: ignore[attr-defined]
            lengths = np.fromiter((len(e.ids) for e in encoded), np.int64, len(encoded))
            ids = np.fromiter(chain.from_iterable(e.ids for e in encoded), np.int64)
            if not len(ids):
                continue
            weighted = table[ids] * weights[ids, None]
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            some = np.flatnonzero(lengths)
            # reduceat over the starts of non-empty texts sums each text's rows
            sums = np.add.reduceat(weighted, starts[some], axis=0)
            norms = np.linalg.norm(sums, axis=1, keepdims=True)
            good = norms[:, 0] > 0
            out[at + some[good]] = sums[good] / norms[good]
        return out


def prepare() -> None:
    """Compute the table into the user cache now, if it is not there (``make`` does, so that
    a first ``semantic:`` query does not spend its minute on it)."""
    StaticEncoder()._load()


if __name__ == "__main__":
    prepare()
