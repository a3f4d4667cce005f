"""The fixture projects with their expected graphs written beside them.

Python (``PY``): a package ``pkg`` with ``util.helper`` called from three places
(``util.format_name``, ``models.User.greet`` through ``from pkg.util import helper``, and
``app.main.run`` through ``import pkg.util``), classes with inheritance and ``self`` calls, and
an unrelated ``other.tools.helper`` whose caller must not reach ``pkg.util.helper`` (and the
reverse). TypeScript (``ts_project``): hand-written records for classes, ``extends``, named,
namespace and ``../`` imports and an ``index.ts`` folder module.
"""

from __future__ import annotations

from tests.graph.fixtures import Hand, Tags, py_tags

PY: dict[str, str] = {
    "pkg/__init__.py": "from .util import helper\n",
    "pkg/util.py": (
        "def helper(x):\n"
        "    return x + 1\n"
        "\n"
        "\n"
        "def format_name(name):\n"
        "    return helper(len(name))\n"
    ),
    "pkg/models.py": (
        "from pkg.util import helper\n"
        "\n"
        "\n"
        "class Base:\n"
        "    def save(self):\n"
        "        return self.validate()\n"
        "\n"
        "    def validate(self):\n"
        "        return True\n"
        "\n"
        "\n"
        "class User(Base):\n"
        "    def greet(self):\n"
        "        return helper(1)\n"
        "\n"
        "    def rename(self, name):\n"
        "        self.save()\n"
        "        return other.save()\n"
    ),
    "other/tools.py": (
        "def helper(x):\n    return x * 2\n\n\ndef unrelated():\n    return helper(3)\n"
    ),
    "app/main.py": (
        "import pkg.util\n"
        "from pkg import models\n"
        "from pkg.models import User\n"
        "from other.tools import unrelated\n"
        "\n"
        "\n"
        "def run():\n"
        "    user = User()\n"
        "    user.greet()\n"
        "    pkg.util.helper(2)\n"
        "    return models.Base()\n"
        "\n"
        "\n"
        "def main():\n"
        "    run()\n"
        "    unrelated()\n"
        "\n"
        "\n"
        "main()\n"
    ),
}

# (source, target, kind): a file is its path, a declaration ``path::Qualified.name``.
PY_EDGES: set[tuple[str, str, str]] = {
    # structure
    ("pkg/util.py", "pkg/util.py::helper", "contains"),
    ("pkg/util.py", "pkg/util.py::format_name", "contains"),
    ("pkg/models.py", "pkg/models.py::Base", "contains"),
    ("pkg/models.py::Base", "pkg/models.py::Base.save", "contains"),
    ("pkg/models.py::Base", "pkg/models.py::Base.validate", "contains"),
    ("pkg/models.py", "pkg/models.py::User", "contains"),
    ("pkg/models.py::User", "pkg/models.py::User.greet", "contains"),
    ("pkg/models.py::User", "pkg/models.py::User.rename", "contains"),
    ("other/tools.py", "other/tools.py::helper", "contains"),
    ("other/tools.py", "other/tools.py::unrelated", "contains"),
    ("app/main.py", "app/main.py::run", "contains"),
    ("app/main.py", "app/main.py::main", "contains"),
    # imports: file -> declaration, or file -> file for a module
    ("pkg/__init__.py", "pkg/util.py::helper", "imports"),
    ("pkg/models.py", "pkg/util.py::helper", "imports"),
    ("app/main.py", "pkg/util.py", "imports"),
    ("app/main.py", "pkg/models.py", "imports"),
    ("app/main.py", "pkg/models.py::User", "imports"),
    ("app/main.py", "other/tools.py::unrelated", "imports"),
    # helper is called from three places, each reached by scope or import
    ("pkg/util.py::format_name", "pkg/util.py::helper", "calls"),
    ("pkg/models.py::User.greet", "pkg/util.py::helper", "calls"),
    ("app/main.py::run", "pkg/util.py::helper", "calls"),
    # the same-named helper in other/ is only reached from its own module
    ("other/tools.py::unrelated", "other/tools.py::helper", "calls"),
    # self calls, through the base class for User.rename
    ("pkg/models.py::Base.save", "pkg/models.py::Base.validate", "calls"),
    ("pkg/models.py::User.rename", "pkg/models.py::Base.save", "calls"),
    ("pkg/models.py::User", "pkg/models.py::Base", "inherits"),
    # app: class construction, module receiver, local call, top-level call from the file
    ("app/main.py::run", "pkg/models.py::User", "calls"),
    ("app/main.py::run", "pkg/models.py::Base", "calls"),
    ("app/main.py::main", "app/main.py::run", "calls"),
    ("app/main.py::main", "other/tools.py::unrelated", "calls"),
    ("app/main.py", "app/main.py::main", "calls"),
}
# Left unresolved: len(name) (builtin), user.greet() and other.save() (unknown receivers).
PY_UNRESOLVED = {"pkg/util.py": 1, "pkg/models.py": 1, "app/main.py": 1}


def py_project() -> dict[str, tuple[Tags, bytes]]:
    """Tags and bytes of every Python fixture file."""
    return {p: (py_tags(p, t), t.encode()) for p, t in PY.items()}


TS: dict[str, str] = {
    "src/shapes.ts": (
        "export class Shape {\n"
        "  area(): number { return 0; }\n"
        '  describe(): string { return "area " + this.area(); }\n'
        "}\n"
        "export class Square extends Shape {\n"
        "  area(): number { return 4; }\n"
        "}\n"
        "export function makeSquare(): Square { return new Square(); }\n"
    ),
    "src/util/index.ts": (
        'import { Shape } from "../shapes";\n'
        "export function total(shapes: Shape[]): number { return shapes.length; }\n"
    ),
    "src/main.ts": (
        'import { makeSquare } from "./shapes";\n'
        'import * as util from "./util";\n'
        "export function main(): number {\n"
        "  const s = makeSquare();\n"
        "  return util.total([s]) + s.area();\n"
        "}\n"
    ),
}


def ts_project() -> dict[str, tuple[Tags, bytes]]:
    """Hand-written records of the TypeScript fixture."""
    shapes = (
        Hand("src/shapes.ts", "typescript", TS["src/shapes.ts"])
        .d("Shape", "class", "export class Shape {")
        .d("area", "method", "area(): number { return 0; }", "Shape")
        .d("describe", "method", "describe(): string", "Shape")
        .r("area", "call", "this.area()", "Shape.describe")
        .d("Square", "class", "export class Square extends")
        .r("Shape", "inherit", "extends Shape", "Square")
        .d("area", "method", "area(): number { return 4; }", "Square")
        .d("makeSquare", "function", "function makeSquare()")
        .r("Square", "reference", "(): Square {", "makeSquare")
        .r("Square", "call", "new Square()", "makeSquare")
    )
    util = (
        Hand("src/util/index.ts", "typescript", TS["src/util/index.ts"])
        .r("Shape", "import", "import { Shape }", module="../shapes")
        .d("total", "function", "export function total")
        .r("Shape", "reference", "shapes: Shape[]", "total")
    )
    main = (
        Hand("src/main.ts", "typescript", TS["src/main.ts"])
        .r("makeSquare", "import", "import { makeSquare }", module="./shapes")
        .r("util", "import", "import * as util", module="./util")
        .d("main", "function", "export function main()")
        .r("makeSquare", "call", "makeSquare();", "main")
        .r("total", "call", "util.total", "main")
        .r("area", "call", "s.area()", "main")
    )
    return {h.path: (h.tags, h.data) for h in (shapes, util, main)}


TS_EDGES: set[tuple[str, str, str]] = {
    ("src/shapes.ts", "src/shapes.ts::Shape", "contains"),
    ("src/shapes.ts::Shape", "src/shapes.ts::Shape.area", "contains"),
    ("src/shapes.ts::Shape", "src/shapes.ts::Shape.describe", "contains"),
    ("src/shapes.ts", "src/shapes.ts::Square", "contains"),
    ("src/shapes.ts::Square", "src/shapes.ts::Square.area", "contains"),
    ("src/shapes.ts", "src/shapes.ts::makeSquare", "contains"),
    ("src/util/index.ts", "src/util/index.ts::total", "contains"),
    ("src/main.ts", "src/main.ts::main", "contains"),
    ("src/shapes.ts::Shape.describe", "src/shapes.ts::Shape.area", "calls"),
    ("src/shapes.ts::Square", "src/shapes.ts::Shape", "inherits"),
    ("src/shapes.ts::makeSquare", "src/shapes.ts::Square", "references"),
    ("src/shapes.ts::makeSquare", "src/shapes.ts::Square", "calls"),
    ("src/util/index.ts", "src/shapes.ts::Shape", "imports"),
    ("src/util/index.ts::total", "src/shapes.ts::Shape", "references"),
    ("src/main.ts", "src/shapes.ts::makeSquare", "imports"),
    ("src/main.ts", "src/util/index.ts", "imports"),
    ("src/main.ts::main", "src/shapes.ts::makeSquare", "calls"),
    ("src/main.ts::main", "src/util/index.ts::total", "calls"),
}
# s.area(): the receiver is a local variable, unknown without types.
TS_UNRESOLVED = {"src/main.ts": 1}
