"""How one field of a verb's request is offered to users, declared once beside the field.

Every verb's request is a frozen dataclass; each field carries an ``Arg`` in its metadata
(``field = arg(default, help=...)``). The field's name is the Python keyword and the MCP
argument, its annotation the type, its default the default; the ``Arg`` adds the help text,
the CLI spelling and, where it differs from the help, the MCP description. The CLI parser and
the MCP tool schemas are generated from these declarations (``sleuth.service.argv`` and
``sleuth.service.tool_schema``), so a field added to a request appears in every face.

This module sits at the bottom of the package (beside ``errors``) because the search request
is declared in ``sleuth.query``, below the service layer that generates the faces.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Self

from sleuth.errors import InvalidQuery

__all__ = [
    "Arg",
    "CliForm",
    "Request",
    "Shape",
    "arg",
    "arg_of",
    "request_fields",
    "shape_of",
    "Spelled",
    "unknown_arguments",
]

CliForm = Literal["positional", "option", "flag", "off_flag", "text", "choice_flags", "hidden"]
"""How the CLI spells a field:

- ``positional``: ``VERB VALUE`` (a tuple of ints takes one or more, an optional one may be left
  out);
- ``option``: ``--flag VALUE`` (a tuple of strings is given once per value);
- ``flag``: ``--flag`` sets a boolean that defaults to false;
- ``off_flag``: ``--flag`` sets a boolean that defaults to true to false (``-i`` is
  ``case_sensitive=False``);
- ``text``: ``--text T``, ``--text-file FILE`` or stdin (the text of an edit);
- ``choice_flags``: one flag per choice (``--before``/``--after``);
- ``hidden``: not offered on the command line.
"""


@dataclass(frozen=True)
class Arg:
    """The user-facing half of a request field (its name, type and default are the field's)."""

    help: str
    cli: CliForm = "option"
    flag: str | None = None
    """The long option (``--ignore-case``); by default ``--`` plus the name with dashes."""
    short: str | None = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    choice_help: tuple[str, ...] = ()
    """For ``choice_flags``: the help of each choice's flag."""
    describe: str | None = None
    """The MCP description, when it should say more (or less) than the CLI help."""
    mcp: bool = True
    """Whether the MCP tool takes this argument."""

    def option(self, name: str) -> str:
        """The field's long option on the command line."""
        return self.flag or "--" + name.replace("_", "-")

    @property
    def description(self) -> str:
        return self.describe or self.help


Shape = Literal["str", "int", "float", "bool", "strs", "ints"]
"""The kinds of value a request field holds (``strs``/``ints``: a tuple of them)."""


def shape_of(hint: Any) -> tuple[Shape, bool]:
    """(the kind of value, whether None is allowed) of a field's resolved annotation."""
    optional = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        parts = [a for a in typing.get_args(hint) if a is not type(None)]
        optional = len(parts) < len(typing.get_args(hint))
        (hint,) = parts
    origin = typing.get_origin(hint)
    if origin is Literal:
        return "str", optional
    if origin is tuple:
        (item, _) = typing.get_args(hint)
        return ("ints" if item is int else "strs"), optional
    if hint is bool:
        return "bool", optional
    if hint is int:
        return "int", optional
    if hint is float:
        return "float", optional
    if hint is str:
        return "str", optional
    raise TypeError(f"a request field cannot hold {hint!r}")


def arg(default: Any = dataclasses.MISSING, **spelling: Any) -> Any:
    """A dataclass field with its ``Arg``; ``default`` omitted makes the field required."""
    meta = {"arg": Arg(**spelling)}
    if isinstance(default, (list, dict, set)):
        raise TypeError("request defaults are immutable: use a tuple")
    return dataclasses.field(default=default, metadata=meta)


def arg_of(field: dataclasses.Field[Any]) -> Arg | None:
    """The ``Arg`` of a request field, or None for an internal field."""
    found = field.metadata.get("arg")
    return found if isinstance(found, Arg) else None


@dataclass(frozen=True)
class Spelled:
    """One user-facing field of a request: its name, default, shape and ``Arg``."""

    name: str
    default: Any
    shape: Shape
    optional: bool
    arg: Arg

    @property
    def required(self) -> bool:
        return self.default is dataclasses.MISSING


def request_fields(request: type) -> list[Spelled]:
    """The user-facing fields of a request type, in declaration order."""
    hints = typing.get_type_hints(request)
    found = []
    for field in dataclasses.fields(request):
        spelled = arg_of(field)
        if spelled is not None:
            shape, optional = shape_of(hints[field.name])
            found.append(Spelled(field.name, field.default, shape, optional, spelled))
    return found


class Request:
    """Base of the verbs' frozen request dataclasses: ``build`` binds raw arguments to fields.

    ``build(*args, **kwargs)`` takes the fields in declaration order (positionally or by name),
    fills in defaults, refuses unknown or missing arguments, and passes the values through the
    type's ``check`` (which validates and normalises, without I/O) before the request is made.

    Names other tools use for a field are accepted as aliases (docs/faces.md#strict-arguments):
    every field's camelCase spelling (``newName``), and the type's own ``ALIASES``
    (``pattern`` for ``query``). Any other name is ``invalid_query`` naming it, the valid names
    and the aliases, so a misspelt option is never silently ignored.
    """

    ALIASES: ClassVar[Mapping[str, str]] = {}
    """Other names of this request's fields: alias -> field."""
    UNKNOWN_FIELD: ClassVar[str | None] = None
    """The field a face's unknown argument names go to, as a warning, instead of an error
    (``find``, whose contract says so: docs/faces.md#find); None: they are refused."""

    @classmethod
    def aliases(cls, valid: tuple[str, ...] | None = None) -> dict[str, str]:
        """alias -> field for the fields in ``valid`` (default: every field)."""
        names = valid if valid is not None else _field_names(cls)
        found = {alias: name for alias, name in cls.ALIASES.items() if name in names}
        for name in names:
            camel = _camel(name)
            if camel != name:
                found.setdefault(camel, name)
        return found

    @classmethod
    def canonical(
        cls,
        arguments: Mapping[str, Any],
        valid: tuple[str, ...] | None = None,
        *,
        lenient: bool = False,
    ) -> dict[str, Any]:
        """``arguments`` with aliases renamed to their fields; ``InvalidQuery`` naming any
        unknown one, the valid names and the aliases (``valid``: the names this face takes).
        ``lenient`` (a face's call): a type with an ``UNKNOWN_FIELD`` collects unknown names
        there, after any it holds already; ``build`` itself is never lenient."""
        names = valid if valid is not None else _field_names(cls)
        aliases = cls.aliases(names)
        out: dict[str, Any] = {}
        unknown = []
        for key, value in arguments.items():
            name = key if key in names else aliases.get(key)
            if name is None:
                unknown.append(key)
                continue
            if name in out:
                raise InvalidQuery(
                    f"{_verb(cls)} got {name!r} twice (as {key!r} too)",
                    details={"argument": name},
                )
            out[name] = value
        if unknown and lenient and cls.UNKNOWN_FIELD is not None:
            out[cls.UNKNOWN_FIELD] = (*out.get(cls.UNKNOWN_FIELD, ()), *unknown)
        elif unknown:
            raise unknown_arguments(_verb(cls), unknown, names, aliases)
        return out

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        """Validate and normalise ``values`` (one per field); raises ``InvalidQuery``."""
        return values

    @classmethod
    def build(cls, *args: Any, **kwargs: Any) -> Self:
        fields = [f for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]
        names = [f.name for f in fields]
        if len(args) > len(fields):
            raise InvalidQuery(f"{_verb(cls)} takes at most {len(fields)} arguments")
        values = dict(zip(names, args, strict=False))
        for key, value in cls.canonical(kwargs, tuple(names)).items():
            if key in values:
                raise InvalidQuery(f"{_verb(cls)} got {key!r} twice")
            values[key] = value
        for field in fields:
            if field.name in values:
                continue
            if field.default is dataclasses.MISSING:
                raise InvalidQuery(
                    f"{_verb(cls)} needs {field.name!r}", details={"argument": field.name}
                )
            values[field.name] = field.default
        return cls(**cls.check(values))


def unknown_arguments(
    verb: str, unknown: list[str], valid: tuple[str, ...], aliases: Mapping[str, str]
) -> InvalidQuery:
    """The ``invalid_query`` for arguments ``verb`` does not take: each one (with the closest
    valid name), the valid names and the accepted aliases."""
    parts = []
    for key in unknown:
        close = difflib.get_close_matches(key, [*valid, *aliases], n=1, cutoff=0.6)
        hint = f" (did you mean {aliases.get(close[0], close[0])!r}?)" if close else ""
        parts.append(f"{key!r}{hint}")
    shown = ", ".join(f"{a}->{f}" for a, f in aliases.items() if _camel(f) != a)
    return InvalidQuery(
        f"{verb} has no argument {', '.join(parts)}: its arguments are "
        f"{', '.join(valid) or '(none)'}" + (f"; aliases: {shown}" if shown else ""),
        details={"unknown": unknown, "valid": list(valid), "aliases": dict(aliases)},
    )


def _field_names(request: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(request) if f.init)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _verb(request: type) -> str:
    return request.__name__.removesuffix("Request").lower() or request.__name__
