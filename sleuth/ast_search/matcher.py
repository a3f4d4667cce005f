"""Matching one pattern tree against one candidate node, with ast-grep's strictness levels.

The semantics follow ast-grep (measured with its 0.51.1 CLI, see tests/ast_search):

- ``smart`` (default): every pattern node must match; unnamed nodes and comments of the target
  may be skipped; target children left after the pattern ends are ignored.
- ``cst``: nothing is skipped on either side and no trailing children are allowed.
- ``ast``: unnamed nodes are skipped on both sides; comments must match; only unnamed
  trailing children are ignored.
- ``relaxed``: as ``ast`` but comments are skipped too.
- ``signature``: as ``relaxed`` but leaf texts are not compared, only node kinds.
- ``template``: node kinds are not compared, only leaf texts (``$A = $B`` matches an
  assignment, a declaration and a field); unnamed nodes of the target may be skipped, comments
  too, and only trailing comments are ignored.

A pattern's ERROR node (a pattern recovered from a parse with errors, docs/query.md) matches a
target node of any kind whose children match its children, as in ast-grep.

``$$$`` is lazy and never backtracks: it stops at the first target sibling that matches the
next pattern node (so ``foo($$$A, $B, 3)`` does not match ``foo(1, 2, 3)``), and it gives back
the punctuation that the pattern spells after it. A named metavariable used twice must bind
structurally equal nodes (leaves compare by text, inner nodes by kind and children).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from sleuth.ast_search.meta_var import MetaVar, VarKind
from sleuth.ast_search.pattern_nodes import PNode, Tag
from sleuth.ast_search.recovery import ERROR_KIND_ID

__all__ = ["STRICTNESS", "Env", "Multi", "Matcher"]

STRICTNESS: tuple[str, ...] = ("cst", "smart", "ast", "relaxed", "signature", "template")
_CST, _SMART, _AST, _RELAXED, _SIGNATURE, _TEMPLATE = range(6)

# outcomes of comparing one pattern node with one target node
_MATCHED, _SKIP_BOTH, _SKIP_GOAL, _SKIP_CAND, _NO_MATCH = range(5)


@dataclass(frozen=True)
class Multi:
    """A ``$$$`` binding: its nodes (punctuation included) and, if empty, where they would be."""

    nodes: tuple[Node, ...]
    position: int


@dataclass
class Env:
    """Metavariable bindings of one match attempt."""

    single: dict[str, Node] = field(default_factory=dict)
    multi: dict[str, Multi] = field(default_factory=dict)

    def copy(self) -> Env:
        return Env(dict(self.single), dict(self.multi))


class Matcher:
    """Matches pattern trees against nodes of one document (``data`` is its source)."""

    __slots__ = ("level", "data", "_skip_comments")

    def __init__(self, strictness: str, data: bytes) -> None:
        self.level = STRICTNESS.index(strictness)
        self.data = data
        self._skip_comments = self.level in (_SMART, _RELAXED, _SIGNATURE, _TEMPLATE)

    def match_root(self, goal: PNode, cand: Node) -> Env | None:
        """The bindings if ``goal`` matches ``cand`` (the whole candidate), else None."""
        env = Env()
        if goal.tag is Tag.META and self.level == _SMART:
            # a root metavariable stands for the candidate itself, comments included
            return env if self._bind(goal, cand, env) else None
        return env if self._match_node(goal, cand, env) == _MATCHED else None

    # -- one node ------------------------------------------------------------------------
    def _text(self, node: Node) -> bytes:
        return self.data[node.start_byte : node.end_byte]

    def _match_node(self, goal: PNode, cand: Node, env: Env) -> int:
        tag = goal.tag
        if tag is Tag.TERMINAL:
            return self._match_terminal(goal, cand)
        if tag is Tag.META:
            if self._skip_comments and cand.is_extra:
                return _SKIP_CAND
            return _MATCHED if self._bind(goal, cand, env) else _NO_MATCH
        if (
            goal.kind_id != cand.kind_id
            and goal.kind_id != ERROR_KIND_ID
            and self.level != _TEMPLATE
        ):
            return _NO_MATCH
        children = cand.children
        if self._match_children(goal.children, children, env, cand):
            return _MATCHED
        return _NO_MATCH

    def _match_terminal(self, goal: PNode, cand: Node) -> int:
        kind_ok = goal.kind_id == cand.kind_id or goal.kind_id == ERROR_KIND_ID
        if kind_ok and self._same_text(goal, cand):
            return _MATCHED
        if self._skip_comments and cand.is_extra:
            return _SKIP_CAND
        level = self.level
        if level == _CST:
            return _NO_MATCH
        cand_unnamed = not cand.is_named
        if level == _TEMPLATE and goal.text == self._text(cand):
            return _MATCHED  # template compares texts, whatever the kinds
        if level in (_SMART, _TEMPLATE):
            return _SKIP_CAND if cand_unnamed else _NO_MATCH
        if level == _SIGNATURE and kind_ok:
            return _MATCHED
        goal_unnamed = not goal.named
        if goal_unnamed:
            return _SKIP_BOTH if cand_unnamed else _SKIP_GOAL
        return _SKIP_CAND if cand_unnamed else _NO_MATCH

    def _same_text(self, goal: PNode, cand: Node) -> bool:
        """Whether a terminal's text matches the candidate's, as ast-grep compares leaves: a
        named one by its text, an unnamed token by its kind alone (Ruby's ``'`` and ``"``
        string delimiters are one kind; the file gate, ``pattern_nodes.fixed_text``, is where
        ast-grep looks at their text)."""
        return not goal.named or goal.text == self._text(cand)

    def _bind(self, goal: PNode, cand: Node, env: Env) -> bool:
        var = goal.var
        assert var is not None
        if var.kind is VarKind.MULTI:
            return self._bind_multi(var, (cand,), cand.start_byte, env)
        if var.kind is VarKind.SINGLE and not cand.is_named:
            return False
        if var.name is None:
            return True
        old = env.single.get(var.name)
        if old is not None and not self.same_tree(old, cand):
            return False
        env.single[var.name] = cand  # the last occurrence is reported, as in ast-grep
        return True

    def _bind_multi(self, var: MetaVar, nodes: tuple[Node, ...], position: int, env: Env) -> bool:
        if var.name is None:
            return True
        old = env.multi.get(var.name)
        if old is not None:
            old_named = [n for n in old.nodes if n.is_named]
            new_named = [n for n in nodes if n.is_named]
            if len(old_named) != len(new_named) or not all(
                self.same_tree(a, b) for a, b in zip(old_named, new_named, strict=True)
            ):
                return False
        env.multi[var.name] = Multi(nodes, nodes[0].start_byte if nodes else position)
        return True

    def same_tree(self, a: Node, b: Node) -> bool:
        """Structural equality for repeated metavariables (ast-grep's exact-match rule); with
        a stack of its own, so a deeply nested target cannot exhaust Python's recursion."""
        stack = [(a, b)]
        while stack:
            x, y = stack.pop()
            if x.id == y.id:
                continue
            if x.named_child_count == 0 or y.named_child_count == 0:
                if self._text(x) != self._text(y):
                    return False
                continue
            if x.kind_id != y.kind_id or x.child_count != y.child_count:
                return False
            stack.extend(zip(reversed(x.children), reversed(y.children), strict=True))
        return True

    # -- a list of siblings --------------------------------------------------------------
    def _match_children(
        self, goals: tuple[PNode, ...], cands: list[Node], env: Env, parent: Node
    ) -> bool:
        if not cands:
            return False
        ng, nc = len(goals), len(cands)
        gi = ci = 0
        while True:
            if gi >= ng:
                return True
            goal = goals[gi]
            if goal.is_multi:
                var = goal.var
                assert var is not None
                gi += 1
                skipped = 0
                while gi < ng and goals[gi].is_trivial:
                    gi += 1
                    skipped += 1
                if gi == ng:  # the $$$ ends the list: it takes every remaining sibling
                    return self._take(var, cands[ci:], skipped, cands, ci, env)
                if goals[gi].is_multi:  # two $$$ in a row: the first takes one node
                    if not self._take(var, cands[ci : ci + 1], skipped, cands, ci + 1, env):
                        return False
                    ci += 1
                    if ci >= nc:
                        return False
                    continue
                first = ci
                while self._match_node(goals[gi], cands[ci], env.copy()) != _MATCHED:
                    ci += 1
                    if ci >= nc:
                        return False
                if not self._take(var, cands[first:ci], skipped, cands, ci, env):
                    return False
            # match one pattern node, skipping what the strictness allows
            while True:
                if ci >= nc:
                    if not self._goals_skippable(goals, gi):
                        return False
                    gi = ng
                    break
                outcome = self._match_node(goals[gi], cands[ci], env)
                if outcome == _MATCHED:
                    gi += 1
                    ci += 1
                    break
                if outcome == _SKIP_CAND:
                    ci += 1
                elif outcome == _SKIP_GOAL:
                    gi += 1
                    if gi == ng:
                        break
                elif outcome == _SKIP_BOTH:
                    gi += 1
                    ci += 1
                    if gi == ng:
                        break
                else:
                    return False
            if gi >= ng:
                return all(self._trailing_ok(c) for c in cands[ci:])
            if ci >= nc:
                return False

    def _take(
        self,
        var: MetaVar,
        run: list[Node],
        skipped: int,
        cands: list[Node],
        after: int,
        env: Env,
    ) -> bool:
        """Bind ``run`` minus the last ``skipped`` nodes (the punctuation the pattern spells)."""
        keep = run[: max(0, len(run) - skipped)]
        if keep:
            position = keep[0].start_byte
        elif run:
            position = run[0].start_byte
        elif after < len(cands):
            position = cands[after].start_byte
        else:
            position = cands[-1].end_byte
        return self._bind_multi(var, tuple(keep), position, env)

    def _goals_skippable(self, goals: tuple[PNode, ...], gi: int) -> bool:
        level = self.level
        for goal in goals[gi:]:
            if goal.is_multi and level != _CST:
                continue
            if level in (_AST, _RELAXED, _SIGNATURE):
                if goal.tag is Tag.META and goal.var is not None:
                    if goal.var.kind is VarKind.ANY:
                        continue
                elif goal.tag is Tag.TERMINAL and not goal.named:
                    continue
            return False
        return True

    def _trailing_ok(self, cand: Node) -> bool:
        level = self.level
        if level == _SMART:
            return True
        if level == _CST:
            return False
        if level == _AST:
            return not cand.is_named
        if level == _TEMPLATE:
            return cand.is_extra
        return not cand.is_named or cand.is_extra
