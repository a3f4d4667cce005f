"""The plain records graph queries return (the lead renders them as the JSON of
docs/json.md#graph-matches).

``NodeInfo`` names a file or declaration with its location; ``Occurrence`` is one use's byte
range (0-based, end-exclusive) and 1-based line, directly readable; ``FileView``, ``NodeView``,
``Dependent`` and ``Ranked`` are the answers of ``graph:PATH``, ``graph:#ID``, dependents and
``graph:`` (docs/query.md#graph-the-reference-graph). Every record has ``to_json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "NodeInfo",
    "Occurrence",
    "Neighbor",
    "EdgeGroup",
    "DeclView",
    "FileView",
    "Use",
    "NodeView",
    "Dependent",
    "Ranked",
]


@dataclass(frozen=True)
class NodeInfo:
    """A graph node: a declaration (``is_file`` False) or a file (name = path, kind ``file``)."""

    id: str
    name: str
    kind: str
    container: str
    path: str
    line: int | None
    end_line: int | None
    start_byte: int | None
    end_byte: int | None
    signature: str = ""
    is_file: bool = False

    @classmethod
    def of(cls, node_id: str, attrs: dict[str, Any]) -> NodeInfo:
        """Build from a node's networkx attributes."""
        if attrs.get("type") == "file":
            return cls(node_id, node_id, "file", "", node_id, None, None, None, None, "", True)
        return cls(
            node_id,
            attrs["name"],
            attrs["kind"],
            attrs["container"],
            attrs["path"],
            attrs["line"],
            attrs["end_line"],
            attrs["start_byte"],
            attrs["end_byte"],
            attrs.get("signature", ""),
        )

    def to_json(self) -> dict[str, Any]:
        # by hand: ``asdict`` deep-copies every field and dominated warm ``graph:PATH``
        return {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "container": self.container,
            "path": self.path,
            "line": self.line,
            "end_line": self.end_line,
            "start_byte": self.start_byte,
            "end_byte": self.end_byte,
            "signature": self.signature,
            "is_file": self.is_file,
        }


@dataclass(frozen=True)
class Occurrence:
    """Where a use is written: usable as a read range."""

    path: str
    start_byte: int
    end_byte: int
    line: int

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_byte": self.start_byte,
            "end_byte": self.end_byte,
            "line": self.line,
        }


@dataclass(frozen=True)
class Neighbor:
    """The other end of one edge, with how many uses the edge stands for."""

    node: NodeInfo
    occurrences: int
    precision: str

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node.to_json(),
            "occurrences": self.occurrences,
            "precision": self.precision,
        }


@dataclass(frozen=True)
class EdgeGroup:
    """Edges of one kind in one direction: ``count`` edges, ``uses`` occurrences in all."""

    kind: str
    count: int
    uses: int
    neighbors: list[Neighbor]

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "count": self.count,
            "uses": self.uses,
            "neighbors": [n.to_json() for n in self.neighbors],
        }


@dataclass
class DeclView:
    """A declaration in ``graph:PATH``: its edges by kind and its members, nested."""

    node: NodeInfo
    outgoing: dict[str, EdgeGroup]
    incoming: dict[str, EdgeGroup]
    members: list[DeclView] = field(default_factory=list)

    def to_json(self, nested: bool = True) -> dict[str, Any]:
        """The declaration with its edges; members in full, or by id (``nested=False``)."""
        return {
            **self.node.to_json(),
            "outgoing": {k: g.to_json() for k, g in self.outgoing.items()},
            "incoming": {k: g.to_json() for k, g in self.incoming.items()},
            "members": [m.to_json() if nested else m.node.id for m in self.members],
        }


@dataclass
class FileView:
    """``graph:PATH``: the file's top-level declarations, its own edges, completeness."""

    path: str
    lang: str
    stamp: str
    complete: bool
    reason: str | None
    declarations: list[DeclView]
    outgoing: dict[str, EdgeGroup]
    incoming: dict[str, EdgeGroup]
    unresolved: int

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "lang": self.lang,
            "stamp": self.stamp,
            "complete": self.complete,
            "incomplete_reason": self.reason,
            "declarations": [d.to_json() for d in self.declarations],
            "outgoing": {k: g.to_json() for k, g in self.outgoing.items()},
            "incoming": {k: g.to_json() for k, g in self.incoming.items()},
            "unresolved": self.unresolved,
        }


@dataclass(frozen=True)
class Use:
    """One occurrence of an edge seen from a node: who uses whom, and where it is written."""

    kind: str
    source: NodeInfo
    target: NodeInfo
    occurrence: Occurrence
    precision: str

    @property
    def edge(self) -> tuple[str, str, str]:
        """The key ``Graph.confirm`` takes."""
        return (self.source.id, self.target.id, self.kind)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source.to_json(),
            "target": self.target.to_json(),
            "occurrence": self.occurrence.to_json(),
            "precision": self.precision,
        }


@dataclass
class NodeView:
    """``graph:#ID``: one declaration, its container and members, and every use in or out."""

    node: NodeInfo
    container: NodeInfo | None
    members: list[NodeInfo]
    incoming: list[Use]
    outgoing: list[Use]

    def to_json(self) -> dict[str, Any]:
        return {
            **self.node.to_json(),
            "parent": self.container.to_json() if self.container else None,
            "members": [m.to_json() for m in self.members],
            "incoming": [u.to_json() for u in self.incoming],
            "outgoing": [u.to_json() for u in self.outgoing],
        }


@dataclass(frozen=True)
class Dependent:
    """A node that depends on the queried one, ``distance`` uses away, first reached ``via``."""

    node: NodeInfo
    distance: int
    via: str

    def to_json(self) -> dict[str, Any]:
        return {**self.node.to_json(), "distance": self.distance, "via": self.via}


@dataclass(frozen=True)
class Ranked:
    """A declaration and its PageRank score (``graph:``)."""

    node: NodeInfo
    score: float

    def to_json(self) -> dict[str, Any]:
        return {**self.node.to_json(), "score": self.score}
