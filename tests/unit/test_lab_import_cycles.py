"""The JupyterLab extension's modules import one another without a cycle.

The graph has an edge ``a -> b`` for every import of ``b`` by ``a`` among the
``.ts``/``.tsx`` files under ``labextension/src`` (its tests included): ``import
… from``, ``import type … from``, ``export … from``, ``import '…'``, ``import(…)``
(a lazy load, or a type ``typeof import(…)``) and ``require(…)``. Type-only
imports count: they are erased from the JavaScript, but a cycle through one is
still a layering cycle (as ``actions.ts`` <-> ``terminals.ts`` was, through
``import type { IContext }``). Shared types go in a module both sides import
(``context.ts``), never in one of the two.

The files are read with a small tokenizer (comments dropped, strings, template
literals and regular expressions recognised), so an import in a comment or a
string is not one. Every relative import must resolve to a file, so an import
the parser misreads fails here rather than drops out of the graph.
"""

from __future__ import annotations

import re
import shutil
from collections import deque
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path, PurePosixPath

import pytest

from tests.support.constants import REPO
from tests.support.graphs import strongly_connected

SRC = REPO / "labextension" / "src"
#: Extensions of the modules in the graph, and those tried for `./name`.
MODULE_SUFFIXES = (".ts", ".tsx")
#: A JavaScript specifier `./name.js` names the TypeScript module `./name.ts`.
JS_SUFFIXES = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",)}
#: After these words, `/` starts a regular expression (else it divides).
REGEX_AFTER_WORDS = {
    "await",
    "case",
    "delete",
    "do",
    "else",
    "in",
    "instanceof",
    "new",
    "of",
    "return",
    "throw",
    "typeof",
    "void",
    "yield",
}
#: After these characters, `/` starts a regular expression. Not after `)`, `]`,
#: `}`, an identifier or a literal (division), nor `<` (a JSX closing tag `</a>`).
REGEX_AFTER_CHARS = set("(,=:[!&|?{;+-*%~^")

#: Where `tokenize` put string literal number N in the code.
PLACEHOLDER = r"'#(\d+)'"
IMPORT_PATTERNS = {
    # import x from '…' / import { a, type B } from '…' / import type … / export … from '…'
    "static": re.compile(
        r"(?<![\w$.])(?P<kw>import|export)(?P<clause>[\s\w$*{},]*?)\bfrom\s*" + PLACEHOLDER
    ),
    # import '…' (for its side effects)
    "side effect": re.compile(r"(?<![\w$.])import\s*" + PLACEHOLDER),
    # import('…'): a lazy load, or a type (typeof import('…'))
    "import()": re.compile(r"(?<![\w$.])import\s*\(\s*" + PLACEHOLDER + r"\s*[,)]"),
    # require('…') and import x = require('…')
    "require": re.compile(r"(?<![\w$.])require\s*\(\s*" + PLACEHOLDER + r"\s*\)"),
}


def tokenize(text: str) -> tuple[str, list[str]]:
    """`text` without its comments, each string literal as `'#N'`, and the literals.

    Template literals are kept out of the code, but what their `${…}` hold is code.
    Lenient where TypeScript can't be read without a parser: a quote, or a `/`
    taken for a regular expression, ends at the end of its line (an apostrophe in
    JSX text then costs that line, not the rest of the file).
    """
    code: list[str] = []
    strings: list[str] = []
    # Brace depth of each `${` being read; the template resumes at its `}`.
    templates: list[int] = []
    depth = 0
    last = ""  # the last code character that is not blank
    i, n = 0, len(text)

    def regex_allowed() -> bool:
        if not last:
            return True
        if last in REGEX_AFTER_CHARS:
            return True
        word = re.search(r"[\w$]+$", "".join(code[-40:]).rstrip())
        return bool(word) and word.group() in REGEX_AFTER_WORDS and last.isalpha()

    def read_template(start: int) -> int:
        """Read template text from `start` (after a backtick or `}`); where code resumes."""
        j = start
        while j < n:
            c = text[j]
            if c == "\\":
                j += 2
            elif c == "`":
                return j + 1
            elif c == "$" and text.startswith("${", j):
                templates.append(depth)
                return j + 2
            else:
                j += 1
        return n

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            newlines = text.count("\n", i, n if end < 0 else end)
            code.append(" " + "\n" * newlines)
            i = n if end < 0 else end + 2
        elif c in "'\"":
            j = i + 1
            while j < n and text[j] not in (c, "\n"):
                j += 2 if text[j] == "\\" else 1
            strings.append(text[i + 1 : min(j, n)])
            code.append(f"'#{len(strings) - 1}'")
            last = "'"
            i = j + 1 if j < n and text[j] == c else j
        elif c == "`":
            code.append("``")
            last = "`"
            i = read_template(i + 1)
            if templates and templates[-1] == depth and text[i - 2 : i] == "${":
                code.append("(")  # the expression's code follows
                last = "("
        elif c == "/" and regex_allowed():
            j, in_class = i + 1, False
            while j < n and text[j] != "\n":
                d = text[j]
                if d == "\\":
                    j += 1
                elif d == "[":
                    in_class = True
                elif d == "]":
                    in_class = False
                elif d == "/" and not in_class:
                    break
                j += 1
            code.append("/re/")
            last = "/"
            i = j + 1 if j < n and text[j] == "/" else j
        elif c == "}" and templates and templates[-1] == depth:
            templates.pop()
            code.append(")``")
            last = "`"
            i = read_template(i + 1)
            if templates and templates[-1] == depth and text[i - 2 : i] == "${":
                code.append("(")
                last = "("
        else:
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            code.append(c)
            if not c.isspace():
                last = c
            i += 1
    return "".join(code), strings


def imports(text: str) -> Iterator[tuple[str, str]]:
    """The module specifiers `text` imports, each with how: `(kind, specifier)`."""
    code, strings = tokenize(text)
    for kind, pattern in IMPORT_PATTERNS.items():
        for match in pattern.finditer(code):
            how = kind
            if kind == "static":
                clause = match["clause"].strip()
                how = match["kw"] + (" type" if clause.startswith("type ") else "")
            yield how, strings[int(match.group(match.lastindex or 0))]


def resolve(importer: Path, specifier: str) -> Path | None:
    """The file a relative `specifier` in `importer` names (None: none exists)."""
    target = PurePosixPath(importer.parent.as_posix()) / specifier
    base = Path(str(target))
    candidates = []
    if specifier.rstrip("/").split("/")[-1] not in (".", ".."):  # else a folder
        candidates += [base]
        candidates += [base.with_name(base.name + s) for s in MODULE_SUFFIXES]
    candidates += [base / f"index{s}" for s in MODULE_SUFFIXES]
    if base.suffix in JS_SUFFIXES:
        candidates += [base.with_suffix(s) for s in JS_SUFFIXES[base.suffix]]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    return None


#: The import graph: module -> {imported module: how it is imported}.
Graph = dict[str, dict[str, str]]


def import_graph(src: Path) -> tuple[Graph, list[str]]:
    """The graph of the modules under `src` (paths relative to it), and the
    relative imports that name no file (`file: specifier`)."""
    src = src.resolve()
    modules = sorted(p for p in src.rglob("*") if p.suffix in MODULE_SUFFIXES and p.is_file())
    graph: Graph = {p.relative_to(src).as_posix(): {} for p in modules}
    unresolved = []
    for module in modules:
        name = module.relative_to(src).as_posix()
        for how, specifier in imports(module.read_text(encoding="utf-8")):
            if not specifier.startswith("."):
                continue  # a package
            target = resolve(module, specifier)
            if target is None:
                unresolved.append(f"{name}: {how} {specifier!r}")
            elif target.suffix in MODULE_SUFFIXES and target.is_relative_to(src):
                graph[name].setdefault(target.relative_to(src).as_posix(), how)
    return graph, unresolved


def cycles(graph: Graph) -> list[str]:
    """One cycle of each cyclic component of `graph`, as `a -[how]-> b -[how]-> a`."""
    found = []
    for component in strongly_connected(graph):
        start = component[0]
        if len(component) == 1 and start not in graph[start]:
            continue
        # The shortest way from `start` back to it, within the component.
        members = set(component)
        came_from: dict[str, str] = {}
        queue = deque([start])
        while queue and start not in came_from:
            node = queue.popleft()
            for succ in sorted(graph[node]):
                if succ in members and succ not in came_from:
                    came_from[succ] = node
                    queue.append(succ)
        path = [start]
        while len(path) == 1 or path[-1] != start:
            path.append(came_from[path[-1]])
        path.reverse()
        text = path[0]
        for a, b in pairwise(path):
            text += f" -[{graph[a][b]}]-> {b}"
        found.append(text)
    return sorted(found)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


# The extension's sources ---------------------------------------------------------


def test_the_lab_extension_has_no_import_cycle() -> None:
    graph, unresolved = import_graph(SRC)
    assert not unresolved, "relative imports that name no file:\n" + "\n".join(unresolved)
    found = cycles(graph)
    assert not found, (
        "import cycles in labextension/src (move what both sides need to a module "
        "they both import, as IContext is in context.ts):\n" + "\n".join(found)
    )


def test_the_graph_has_the_extensions_modules_and_imports() -> None:
    """The check can't pass on nothing: it reads every module and their imports."""
    graph, _ = import_graph(SRC)
    on_disk = {p.relative_to(SRC).as_posix() for p in SRC.rglob("*.ts*")}
    assert set(graph) == {m for m in on_disk if m.endswith(MODULE_SUFFIXES)}
    assert len(graph) >= 20
    assert sum(map(len, graph.values())) >= 2 * len(graph)
    assert "context.ts" in graph["terminals.ts"]
    assert "actions.ts" not in graph["terminals.ts"]


def test_the_old_cycle_is_found_again_if_brought_back(tmp_path: Path) -> None:
    """A copy of the sources with `terminals.ts` importing a type from `actions.ts`."""
    copy = tmp_path / "src"
    shutil.copytree(SRC, copy)
    terminals = copy / "terminals.ts"
    terminals.write_text(
        "import type { IContext as IOld } from './actions';\n"
        "export type IOldContext = IOld;\n" + terminals.read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    graph, unresolved = import_graph(copy)
    assert not unresolved
    assert cycles(graph) == [
        "actions.ts -[export]-> terminals.ts -[import type]-> actions.ts",
    ]


# The cycle finder, on made-up sources -------------------------------------------


@pytest.mark.parametrize(
    ("statement", "how"),
    [
        ("import { b } from './b';", "import"),
        ("import b from './b';", "import"),
        ("import * as b from './b';", "import"),
        ('import b, { c as d } from "./b";', "import"),
        ("import {\n  type B,\n  c\n} from './b';", "import"),
        ("import type { B } from './b';", "import type"),
        ("export { b } from './b';", "export"),
        ("export * from './b';", "export"),
        ("export type { B } from './b';", "export type"),
        ("import './b';", "side effect"),
        ("const load = () => import('./b');", "import()"),
        ("type M = typeof import('./b');", "import()"),
        ("let x: import('./b').B;", "import()"),
        ("import b = require('./b');", "require"),
        ("const s = `${(await import('./b')).name}`;", "import()"),
        ("import { b } from './b.js';", "import"),
        ("import { b } from './dir';", "import"),
    ],
)
def test_each_form_of_import_makes_a_cycle(tmp_path: Path, statement: str, how: str) -> None:
    files = {
        "a.ts": statement + "\n",
        "b.ts": "import type { A } from './a';\n",
        "dir/index.ts": "import type { A } from '../a';\n",
    }
    if "./dir" in statement:
        del files["b.ts"]
    graph, unresolved = import_graph(write(tmp_path, files))
    assert not unresolved
    other = "dir/index.ts" if "./dir" in statement else "b.ts"
    assert graph["a.ts"] == {other: how}
    assert cycles(graph) == [f"a.ts -[{how}]-> {other} -[import type]-> a.ts"]


@pytest.mark.parametrize(
    "text",
    [
        "// import { b } from './b';\n",
        "/* import { b } from './b'; */\n",
        "/**\n * import('./b')\n */\n",
        "const s = \"import { b } from './b'\";\n",
        "const s = 'import(\\'./b\\')';\n",
        "const s = `import { b } from './b'`;\n",
        "const r = /import('.\\/b')/;\n",
        "thing.import('./b');\n",
        "jest.mock('./b');\n",
    ],
)
def test_what_is_not_an_import(tmp_path: Path, text: str) -> None:
    files = {"a.ts": text, "b.ts": "import { a } from './a';\n"}
    graph, _ = import_graph(write(tmp_path, files))
    assert graph["a.ts"] == {}
    assert cycles(graph) == []


def test_an_import_after_tricky_code_is_still_seen(tmp_path: Path) -> None:
    """Regular expressions, divisions and JSX (`</a>`, an apostrophe in text) don't
    swallow the code after them."""
    files = {
        "a.tsx": (
            "const r = /['\"`]/g;\n"
            "const half = (x / 2) / 1;\n"
            "const q = [1][0] / 2; // it's\n"
            "const url = 'http://x/*';\n"
            "const t = `a ${`b ${'c'}`} d`;\n"
            "const v = <p>Don't <b>stop</b> now</p>;\n"
            "const w = <br />;\n"
            "export const load = () => import('./b');\n"
        ),
        "b.ts": "import type { A } from './a';\n",
    }
    graph, _ = import_graph(write(tmp_path, files))
    assert graph["a.tsx"] == {"b.ts": "import()"}
    assert cycles(graph) == ["a.tsx -[import()]-> b.ts -[import type]-> a.tsx"]


def test_longer_cycles_and_self_imports_are_found(tmp_path: Path) -> None:
    files = {
        "a.ts": "import { b } from './b';\n",
        "b.ts": "import { c } from './c';\n",
        "c.ts": "import type { A } from './a';\nimport { d } from './d';\n",
        "d.ts": "export const d = 1;\n",
        "e.ts": "import { e } from './e';\nimport { a } from './a';\n",
    }
    graph, _ = import_graph(write(tmp_path, files))
    assert cycles(graph) == [
        "a.ts -[import]-> b.ts -[import]-> c.ts -[import type]-> a.ts",
        "e.ts -[import]-> e.ts",
    ]


def test_no_cycle_in_a_layered_graph(tmp_path: Path) -> None:
    files = {
        "context.ts": "import type { M } from './model';\nexport interface IContext { m: M }\n",
        "model.ts": "export interface M { x: number }\n",
        "actions.ts": (
            "import type { IContext } from './context';\nexport { openAll } from './terminals';\n"
        ),
        "terminals.ts": "import type { IContext } from './context';\nexport const openAll = 1;\n",
        "commands.ts": "import type { IContext } from './context';\n"
        "const load = () => import('./actions');\n",
        "index.ts": "import './commands';\n",
    }
    graph, unresolved = import_graph(write(tmp_path, files))
    assert not unresolved
    assert sum(map(len, graph.values())) == 7
    assert cycles(graph) == []


def test_a_relative_import_of_no_file_is_reported(tmp_path: Path) -> None:
    files = {"a.ts": "import { b } from './missing';\nimport '../style/index.css';\n"}
    write(tmp_path / "style", {"index.css": ""})
    _, unresolved = import_graph(write(tmp_path / "src", files))
    assert unresolved == ["a.ts: import './missing'"]
