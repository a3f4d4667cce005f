"""``sleuth.find``: what the ``find`` verb adds to the engines (docs/faces.md#find).

``find`` is the harness search tool (fuzzy paths, grep) served on top of the one engine: its
walk, cloaking, literal and regex matchers and result registry are the ones ``search`` uses.
This package holds only what ``find`` needs besides them: the inline constraints of its query
(``constraints``), approximate line matching for ``grep_mode="fuzzy"`` (``approximate``), the
frecency of files read and edited through sleuth (``frecency``, a SQLite table in ``.sleuth/``)
and the ranking of paths by fuzzy score boosted by that frecency (``ranking``).

It sits at the query level (docs/architecture.md#layers): it may use an engine
(``text_search``'s path scoring) and the workspace, and only the service layer uses it.
"""
