"""Boolean text queries (docs/query.md#boolean): parsing, per-file evaluation and prefilter hints.

Syntax, decided here and relied on by the query layer:

* Operators are the uppercase words ``AND``, ``OR``, ``NOT`` standing alone, ``||`` anywhere
  outside quotes, and a ``|`` standing alone between spaces. ``a|b`` (unspaced) stays one term:
  regex alternation. Lowercase ``and``/``or``/``not`` are ordinary words.
* Precedence: ``NOT`` binds tightest, then ``AND``, then ``OR``. Terms side by side without an
  operator are ANDed (as in zoekt): ``foo bar OR baz`` is ``(foo AND bar) OR baz``. ``a NOT b``
  therefore means a and not b; a leading ``NOT a`` is allowed.
* A ``(`` at the start of a token opens a group and its ``)`` closes it; a ``(`` glued to a term
  (``foo(bar)``) belongs to the term, with its matching ``)``. ``[...]`` and ``\\x`` escapes inside
  a term are kept whole. Whitespace always ends an unquoted term: quote terms with spaces.
* ``"a b"`` is one literal term; inside quotes ``\\"`` is a quote and ``\\\\`` a backslash.
* An unquoted term is a regex when it contains any of ``| ( ) [ ] \\`` or ``.*`` / ``.+``;
  otherwise it is a literal. A term that looks like a regex but is not a valid one is an
  ``invalid_query`` that says to quote it — never silently searched as text.

Evaluation holds per file (as in zoekt and Sourcegraph): ``evaluate`` returns None when the
expression is false for the file's text, else the merged spans of every positive term (a term
with no ``NOT`` above it) that occurs in the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from sleuth.errors import InvalidQuery, SleuthError
from sleuth.prefilter import Literals
from sleuth.text_search.matchers import Matcher, literal_matcher, regex_matcher
from sleuth.text_search.regex_scan import caret_message

__all__ = ["BoolNode", "Term", "And", "Or", "Not", "is_boolean", "parse_boolean", "evaluate"]

_REGEX_CHARS = frozenset("|()[]\\")
_WORD_OPS = {"AND": "and", "OR": "or", "NOT": "not"}


class BoolNode:
    """A node of a Boolean query: ``Term``, ``And``, ``Or`` or ``Not``."""

    def required_literals(self, case_sensitive: bool = False) -> Literals | None:
        """Literals a qualifying file must contain (ASCII-folded); None is never wrong."""
        raise NotImplementedError


@dataclass(frozen=True)
class Term(BoolNode):
    """One search term; ``position`` is where it starts in the query (for error messages)."""

    text: str
    quoted: bool
    position: int = field(default=0, compare=False)

    @property
    def is_regex(self) -> bool:
        return not self.quoted and (
            any(ch in _REGEX_CHARS for ch in self.text) or ".*" in self.text or ".+" in self.text
        )

    def matcher(self, case_sensitive: bool = True) -> Matcher:
        """A literal matcher, or a regex matcher for unquoted regex-looking terms."""
        return _term_matcher(self.text, self.is_regex, case_sensitive, self.position)

    def required_literals(self, case_sensitive: bool = False) -> Literals | None:
        return self.matcher(case_sensitive).required_literals()


@dataclass(frozen=True)
class And(BoolNode):
    children: tuple[BoolNode, ...]

    def required_literals(self, case_sensitive: bool = False) -> Literals | None:
        groups = [g for c in self.children for g in c.required_literals(case_sensitive) or ()]
        return tuple(dict.fromkeys(groups)) or None


@dataclass(frozen=True)
class Or(BoolNode):
    children: tuple[BoolNode, ...]

    def required_literals(self, case_sensitive: bool = False) -> Literals | None:
        alternatives: list[bytes] = []
        for child in self.children:
            lits = child.required_literals(case_sensitive)
            if not lits or len(lits) != 1:
                return None  # one branch without a single hint group: any file may qualify
            alternatives.extend(lits[0])
        return (tuple(dict.fromkeys(alternatives)),)


@dataclass(frozen=True)
class Not(BoolNode):
    child: BoolNode

    def required_literals(self, case_sensitive: bool = False) -> Literals | None:
        return None


@lru_cache(maxsize=256)
def _term_matcher(text: str, is_regex: bool, case_sensitive: bool, position: int) -> Matcher:
    if not is_regex:
        return literal_matcher(text, case_sensitive=case_sensitive)
    try:
        return regex_matcher(text, case_sensitive=case_sensitive)
    except SleuthError as exc:
        where = position + int(exc.details.get("position", 0))
        headline = exc.message.splitlines()[0]
        hint = f'To search for the text itself, quote it: "{text}".'
        raise type(exc)(
            f"term `{text}` of the Boolean query: {headline}\n{hint}",
            details={**exc.details, "position": where},
        ) from exc


@dataclass(frozen=True)
class _Token:
    kind: str  # "term" | "and" | "or" | "not" | "(" | ")"
    position: int
    text: str = ""
    quoted: bool = False


def _error(query: str, position: int, what: str, hint: str) -> InvalidQuery:
    message = caret_message(
        f"invalid Boolean query at position {position}: {what}", query, position, hint
    )
    return InvalidQuery(message, details={"position": position})


def _read_quoted(query: str, i: int, strict: bool) -> tuple[str, int]:
    chars: list[str] = []
    j = i + 1
    while j < len(query) and query[j] != '"':
        if query[j] == "\\" and j + 1 < len(query) and query[j + 1] in '"\\':
            j += 1
        chars.append(query[j])
        j += 1
    if j >= len(query) and strict:
        raise _error(query, i, "unterminated quote", 'Close the quoted term with ".')
    return "".join(chars), j + 1


def _read_word(query: str, i: int) -> int:
    j, depth, in_class = i, 0, False
    while j < len(query):
        ch = query[j]
        if ch == "\\" and j + 1 < len(query):
            j += 2
            continue
        if ch.isspace() or query.startswith("||", j):
            break
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                break  # closes a group opened before this term
            depth -= 1
        j += 1
    return j


def _tokenize(query: str, *, strict: bool) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    while i < len(query):
        ch = query[i]
        if ch.isspace():
            i += 1
        elif ch == '"':
            text, end = _read_quoted(query, i, strict)
            tokens.append(_Token("term", i, text, quoted=True))
            i = end
        elif ch in "()":
            tokens.append(_Token(ch, i))
            i += 1
        elif query.startswith("||", i):
            tokens.append(_Token("or", i))
            i += 2
        elif ch == "|" and (i + 1 == len(query) or query[i + 1].isspace()):
            tokens.append(_Token("or", i))
            i += 1
        else:
            end = _read_word(query, i)
            word = query[i:end]
            kind = _WORD_OPS.get(word, "term")
            tokens.append(_Token(kind, i, word if kind == "term" else ""))
            i = end
    return tokens


def is_boolean(query: str) -> bool:
    """True when ``query`` uses a Boolean operator (AND, OR, NOT, ``||``, a spaced ``|``)."""
    return any(t.kind in ("and", "or", "not") for t in _tokenize(query, strict=False))


class _Parser:
    def __init__(self, query: str) -> None:
        self.query = query
        self.tokens = _tokenize(query, strict=True)
        self.k = 0

    def peek(self) -> _Token | None:
        return self.tokens[self.k] if self.k < len(self.tokens) else None

    def take(self) -> _Token:
        self.k += 1
        return self.tokens[self.k - 1]

    def fail(self, position: int, what: str, hint: str) -> InvalidQuery:
        return _error(self.query, position, what, hint)

    def operand_follows(self, op: _Token) -> None:
        nxt = self.peek()
        if nxt is None or nxt.kind in ("and", "or", ")"):
            name = {"and": "AND", "or": "OR", "not": "NOT"}[op.kind]
            raise self.fail(
                op.position,
                f"`{name}` has nothing on its right",
                f'Put a term after {name}, or quote it to search for it: "{name}".',
            )

    def parse(self) -> BoolNode:
        if not self.tokens:
            raise self.fail(0, "empty query", "Type at least one term.")
        node = self.parse_or()
        extra = self.peek()
        if extra is not None:
            raise self.fail(extra.position, "unmatched `)`", "Remove it or add the missing `(`.")
        return node

    def parse_or(self) -> BoolNode:
        children = [self.parse_and()]
        while (tok := self.peek()) is not None and tok.kind == "or":
            self.operand_follows(self.take())
            children.append(self.parse_and())
        return children[0] if len(children) == 1 else Or(_flatten(Or, children))

    def parse_and(self) -> BoolNode:
        children = [self.parse_unary()]
        while (tok := self.peek()) is not None and tok.kind in ("and", "not", "term", "("):
            if tok.kind == "and":
                self.operand_follows(self.take())
            children.append(self.parse_unary())
        return children[0] if len(children) == 1 else And(_flatten(And, children))

    def parse_unary(self) -> BoolNode:
        tok = self.peek()
        if tok is None:
            end = len(self.query)
            raise self.fail(end, "the query ends where a term is expected", "Add a term.")
        self.take()
        if tok.kind == "term":
            return Term(tok.text, tok.quoted, tok.position + int(tok.quoted))
        if tok.kind == "not":
            self.operand_follows(tok)
            return Not(self.parse_unary())
        if tok.kind == "(":
            nxt = self.peek()
            if nxt is not None and nxt.kind == ")":
                raise self.fail(tok.position, "empty group `()`", "Put terms inside or remove it.")
            node = self.parse_or()
            close = self.peek()
            if close is None or close.kind != ")":
                raise self.fail(tok.position, "unbalanced `(`", "Close the group with `)`.")
            self.take()
            return node
        if tok.kind == ")":
            raise self.fail(tok.position, "unmatched `)`", "Remove it or add the missing `(`.")
        name = tok.kind.upper()
        raise self.fail(
            tok.position,
            f"`{name}` has nothing on its left",
            f'Put a term before {name}, or quote it to search for it: "{name}".',
        )


def _flatten(kind: type[And] | type[Or], children: list[BoolNode]) -> tuple[BoolNode, ...]:
    flat: list[BoolNode] = []
    for child in children:
        flat.extend(child.children if isinstance(child, kind) else (child,))
    return tuple(flat)


def parse_boolean(query: str) -> BoolNode:
    """Parse a Boolean query; InvalidQuery (with ``position``) on malformed input."""
    return _Parser(query).parse()


def _positive_terms(node: BoolNode, out: list[Term]) -> list[Term]:
    if isinstance(node, Term):
        out.append(node)
    elif isinstance(node, And | Or):
        for child in node.children:
            _positive_terms(child, out)
    return out  # a Not contributes no spans


def evaluate(node: BoolNode, data: bytes, case_sensitive: bool) -> list[tuple[int, int]] | None:
    """None if ``node`` is false for the file ``data``; else the positive terms' merged spans."""
    spans: dict[Term, list[tuple[int, int]]] = {}

    def found(term: Term) -> list[tuple[int, int]]:
        if term not in spans:
            spans[term] = list(term.matcher(case_sensitive).find_spans(data))
        return spans[term]

    def holds(n: BoolNode) -> bool:
        if isinstance(n, Term):
            return bool(found(n))
        if isinstance(n, And):
            return all(holds(c) for c in n.children)
        if isinstance(n, Or):
            return any(holds(c) for c in n.children)
        assert isinstance(n, Not)
        return not holds(n.child)

    if not holds(node):
        return None
    merged: list[tuple[int, int]] = []
    for s, e in sorted({span for t in _positive_terms(node, []) for span in found(t)}):
        if merged and (s < merged[-1][1] or s == merged[-1][0] or s == e == merged[-1][1]):
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged
