"""The MCP tools' input schemas, generated from the verbs' requests (docs/faces.md).

The SDK derives a tool's JSON schema (and validates calls against it) from the signature of
the function it serves. ``tool_signature`` builds that signature from a request's fields: each
MCP-visible field becomes a keyword parameter with the field's type, default and the ``Arg``'s
description (as ``Annotated[type, Field(description=...)]``), so a field added to a request
appears in its tool without any other change.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import Field

from sleuth.fields import Shape, Spelled, request_fields

__all__ = ["tool_signature", "tool_arguments"]

_TYPES: dict[Shape, Any] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "strs": Sequence[str],
    "ints": Sequence[int],
}


def _annotation(field: Spelled) -> Any:
    # strict scalars: the SDK's model would read ``true`` or ``1.0`` as the integer 1, and a
    # number as a flag; a float takes an integer, as JSON numbers do (no schema change)
    base = _TYPES[field.shape]
    if field.shape in ("int", "bool", "str"):
        base = Annotated[base, Field(strict=True)]
    elif field.shape == "ints":
        base = Sequence[Annotated[int, Field(strict=True)]]
    if field.optional:
        base = base | None
    return Annotated[base, Field(description=field.arg.description)]


def _mcp_fields(request: type) -> list[Spelled]:
    return [field for field in request_fields(request) if field.arg.mcp]


def tool_arguments(request: type) -> tuple[str, ...]:
    """The argument names the request's tool takes, in order."""
    return tuple(field.name for field in _mcp_fields(request))


def tool_signature(request: type, returns: Any) -> inspect.Signature:
    """The signature of the request's tool function: keywords only, required ones first."""
    fields = sorted(_mcp_fields(request), key=lambda field: not field.required)
    parameters = [
        inspect.Parameter(
            field.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if field.required else field.default,
            annotation=_annotation(field),
        )
        for field in fields
    ]
    return inspect.Signature(parameters, return_annotation=returns)
