"""``sleuth.lsp_bridge``: real language servers as a symbol engine
(docs/query.md#symbols-and-symbolid-declarations).

An LSP client on pygls 2 that starts servers as subprocesses over stdio — one per workspace
and server, lazily, reused, restarted once after a crash, killed with their process group on
close — and answers symbol, reference, definition and rename queries in byte ranges of the
workspace's current files. Layout (transport, session and positions kept apart):

    servers.py     the server table per language, lookup, versions, install hints (doctor)
    transport.py   one process + JSON-RPC channel: timeouts, cancel, stderr drain, killpg
    documents.py   document sync (the bytes each open document was sent), URIs, cloaking
    session.py     initialize, readiness, server-to-client answers, requests
    positions.py   byte offsets <-> LSP positions in utf-8/utf-16/utf-32 (the only place)
    results.py     LspLocation/LspEdit and the normalisers of raw LSP JSON (declarations
                   become the model's SymbolDef, as the tags' do)
    compile_db.py  clangd's compile_commands.json under .sleuth/clangd
    supervisor.py  the event loop, lazy start, crash accounting and restarts, retries
    pool.py        ServerPool, the synchronous API used by query/
"""

from __future__ import annotations

from sleuth.lsp_bridge.pool import ServerPool
from sleuth.lsp_bridge.results import LspEdit, LspLocation
from sleuth.lsp_bridge.servers import SERVERS, language_of, server_status

__all__ = [
    "ServerPool",
    "SERVERS",
    "server_status",
    "language_of",
    "LspLocation",
    "LspEdit",
]
