"""kanawa's layers import one way: down (the picture in ``docs/design.md``, "Layers").

Every module under ``src/kanawa`` is parsed with :mod:`ast`; every import of a ``kanawa`` module in
it — at module level or inside a function, relative ones resolved — must name a module of its own
layer or of a layer below. Imports under ``if TYPE_CHECKING:`` are left out: they name a type for
the checker and run nothing (``kanawa.context`` names ``RunOptions`` of the loop that way).

The checker is tested too: a module planted in a copy of the tree that imports upward fails it.
(``tests/server/test_layers.py`` checks the server's own ``http`` → ``runs`` → ``store`` more closely,
type-only imports included.)
"""

from __future__ import annotations

import ast
import functools
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import kanawa

ROOT = Path(kanawa.__file__).parent

LAYERS: tuple[tuple[str, ...], ...] = (
    # bottom first; a module belongs to the layer of its longest matching prefix
    (
        "kanawa.types",
        "kanawa.secrets",
        "kanawa._logging",
        "kanawa._lazy",
        "kanawa._eager",
        "kanawa._sync",
        "kanawa._cli_help",
        "kanawa.prompts",
    ),
    ("kanawa.llm", "kanawa.testing"),
    ("kanawa.trace",),
    ("kanawa.context", "kanawa.tools"),
    ("kanawa.loop.compaction",),
    ("kanawa.loop",),
    ("kanawa.agents", "kanawa"),
    ("kanawa.a2a", "kanawa.mcp_server"),
    ("kanawa.server.store", "kanawa.server.settings"),
    ("kanawa.server.runs",),
    ("kanawa.server",),
    ("kanawa.evals",),
    ("kanawa.apps",),
    ("kanawa.evals.judges",),
    ("kanawa.cli",),
)
"""The layers, bottom to top (``docs/design.md`` draws the same list)."""


def layer_of(module: str, layers: Sequence[tuple[str, ...]]) -> int:
    """The index of ``module``'s layer: the one holding its longest matching prefix."""
    best, depth = -1, -1
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = index, len(prefix)
    if best < 0:
        raise LookupError(f"{module} is in no layer: add it to LAYERS and to docs/design.md")
    return best


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` except the bodies of ``if TYPE_CHECKING:`` blocks."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _is_module(root: Path, name: str) -> bool:
    path = root.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


@functools.cache
def _import_statements(text: str) -> tuple[tuple[int, str, tuple[str, ...]], ...]:
    """Every run-time import statement of a module's source ``text``, as ``(level, module, names)``:
    ``import a.b`` is ``(-1, "", ("a.b",))``; ``from ..a import b`` is ``(2, "a", ("b",))``. Cached by
    the text: the copied tree of the planted-import tests parses each unchanged module once."""
    found: list[tuple[int, str, tuple[str, ...]]] = []
    for node in _runtime_nodes(ast.parse(text)):
        if isinstance(node, ast.Import):
            found.append((-1, "", tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or "", tuple(alias.name for alias in node.names)))
    return tuple(found)


def imports_of(path: Path, module: str, root: Path) -> set[str]:
    """The modules of the package at ``root`` that ``path`` (the module ``module``) imports at run
    time: for ``from a import b``, ``a.b`` when it is a module, else ``a``."""
    package = root.name
    is_package = path.name == "__init__.py"
    here = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for level, source, names in _import_statements(path.read_text(encoding="utf-8")):
        if level < 0:
            found.update(names)
            continue
        if level:
            base = here.split(".")[: len(here.split(".")) - (level - 1)]
            target = ".".join([*base, source] if source else base)
        else:
            target = source
        for name in names:
            named = f"{target}.{name}"
            found.add(named if _is_module(root, named) else target)
    return {name for name in found if name == package or name.startswith(package + ".")}


def upward_imports(root: Path, layers: Sequence[tuple[str, ...]]) -> list[str]:
    """Every import in the package at ``root`` that names a module of a higher layer."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        own = layer_of(module, layers)
        for imported in sorted(imports_of(path, module, root)):
            target = layer_of(imported, layers)
            if target > own:
                found.append(f"{module} (layer {own}) imports {imported} (layer {target})")
    return found


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert upward_imports(ROOT, LAYERS) == []


def test_every_top_level_module_has_a_layer() -> None:
    for path in ROOT.iterdir():
        if path.name.startswith("__") or not (path.suffix == ".py" or (path / "__init__.py").is_file()):
            continue
        layer_of(f"kanawa.{path.stem}", LAYERS)


@pytest.fixture(scope="module")
def tree_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python files of the real tree, copied once; it passes the check as the real one does."""

    def not_python(directory: str, names: list[str]) -> list[str]:
        return [
            name
            for name in names
            if name in ("__pycache__", "node_modules")
            or (not name.endswith(".py") and not (Path(directory) / name).is_dir())
        ]

    copy = tmp_path_factory.mktemp("tree") / "kanawa"
    shutil.copytree(ROOT, copy, ignore=not_python)
    assert upward_imports(copy, LAYERS) == []
    return copy


@pytest.mark.parametrize(
    ("where", "line"),
    [
        ("tools/planted.py", "from kanawa.agents.agent import Agent\n"),
        ("loop/compaction/planted.py", "def later():\n    from kanawa.loop.runner import AgentLoopRunner\n"),
        ("llm/planted.py", "from ..loop import events\n"),
        ("server/runs/planted.py", "import kanawa.server.http.app\n"),
    ],
)
def test_a_planted_upward_import_fails_the_check(tree_copy: Path, where: str, line: str) -> None:
    """One module added to the copy that imports upward (at module level, inside a function,
    relative, ``import a.b``): the check names exactly that import."""
    planted = tree_copy / where
    planted.write_text(line, encoding="utf-8")
    try:
        found = upward_imports(tree_copy, LAYERS)
    finally:
        planted.unlink()
    assert len(found) == 1, found
    assert found[0].startswith("kanawa." + where.removesuffix(".py").replace("/", ".") + " ")


def test_a_type_only_import_is_not_an_arrow(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "low.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.high import Thing\n",
        encoding="utf-8",
    )
    (package / "high.py").write_text("from pkg.low import TYPE_CHECKING\nThing = 1\n", encoding="utf-8")
    layers = (("pkg", "pkg.low"), ("pkg.high",))
    assert upward_imports(package, layers) == []
    (package / "low.py").write_text("from pkg.high import Thing\n", encoding="utf-8")
    assert upward_imports(package, layers) == ["pkg.low (layer 0) imports pkg.high (layer 1)"]


def test_a_worker_process_loads_its_agents_and_extensions_without_fastapi() -> None:
    """The run layer holds the loaders and the ``Extension`` class: a Celery worker that loads an
    application's extensions (SmartAO's, with a router) imports no web framework to do it."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from kanawa.server.runs.worker_process import WorkerProcess\n"
        "from kanawa.server.runs.loaders import load_agents\n"
        "from kanawa.server.settings import ServerSettings\n"
        "process = WorkerProcess(ServerSettings(serve_agents='demo'))\n"
        "assert sorted(process.manager.agents) == ['calc', 'echo'], process.manager.agents\n"
        "loaded = sorted(name for name in sys.modules if name.split('.')[0] in ('fastapi', 'starlette'))\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
