"""The resident engine behind the CLI (docs/faces.md#the-daemon).

``wire`` is what the thin client (``sleuth.client``) and the daemon share and imports the
standard library only; ``server`` is the daemon, one ``Workbench`` held for one root;
``control`` starts, stops and asks it.
"""
