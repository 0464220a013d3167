"""What kanawa's modules export and where each exported name is defined, read from the source.

The source, not the objects: a constant or a type alias has no ``__module__``, and two modules may hold
equal strings, so "which module defines ``DEFAULT_TTL_SECONDS``" is answered by finding the statement
that binds it — a ``def``/``class``/assignment (defined here), or an import or a lazy-export entry
(``"Name": "kanawa.pkg.module"``, see :mod:`kanawa._lazy`) that points elsewhere, followed to its end.
"""

from __future__ import annotations

import ast
import pkgutil
from functools import cache
from pathlib import Path

import kanawa

ROOT = Path(kanawa.__file__).parent


def public_modules() -> list[str]:
    """Every module of the package whose dotted path has no ``_private`` part."""
    names = ["kanawa"] + [info.name for info in pkgutil.walk_packages([str(ROOT)], "kanawa.")]
    return sorted(n for n in names if not any(part.startswith("_") for part in n.split(".")))


def source_of(module: str) -> Path:
    path = ROOT.joinpath(*module.split(".")[1:])
    package = path / "__init__.py"
    return package if package.is_file() else path.with_suffix(".py")


def is_package(module: str) -> bool:
    return source_of(module).name == "__init__.py"


def parent(module: str) -> str:
    return module.rpartition(".")[0]


@cache
def _tree(module: str) -> ast.Module:
    return ast.parse(source_of(module).read_text(encoding="utf-8"))


def declared_all(module: str) -> list[str] | None:
    """The literal ``__all__`` of ``module`` (``None`` when it has none)."""
    for statement in _tree(module).body:
        targets = (
            statement.targets
            if isinstance(statement, ast.Assign)
            else [statement.target]
            if isinstance(statement, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert isinstance(statement.value, ast.List | ast.Tuple), f"{module}.__all__ must be a literal"
            return [ast.literal_eval(element) for element in statement.value.elts]
    return None


def _lazy_entries(node: ast.AST) -> dict[str, str]:
    """``{"Name": "kanawa.module"}`` dict literals under ``node`` (the lazy-export maps)."""
    found: dict[str, str] = {}
    for child in ast.walk(node):
        if isinstance(child, ast.Dict):
            for key, value in zip(child.keys, child.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and isinstance(value, ast.Constant)
                    and isinstance(value.value, str)
                    and value.value.startswith("kanawa.")
                ):
                    found[key.value] = value.value
    return found


@cache
def _imports_and_definitions(module: str) -> tuple[dict[str, str], frozenset[str]]:
    """Names ``module`` takes from elsewhere (name -> source module) and names it binds itself."""
    imported: dict[str, str] = {}
    defined: set[str] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for statement in statements:
            if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
                for alias in statement.names:
                    imported[alias.asname or alias.name] = f"{statement.module}:{alias.name}"
            elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(statement.name)
            elif isinstance(statement, ast.Assign | ast.AnnAssign):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                for target in targets:
                    defined.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(statement, ast.If | ast.Try):
                visit(statement.body)
                visit(statement.orelse)
                for handler in getattr(statement, "handlers", []):
                    visit(handler.body)
            for name, source in _lazy_entries(statement).items():
                imported[name] = f"{source}:{name}"

    visit(_tree(module).body)
    return imported, frozenset(defined - set(imported))


def defining_module(module: str, name: str) -> str:
    """The module whose source defines ``name`` as ``module`` exports it (following re-exports)."""
    seen: set[tuple[str, str]] = set()
    while (module, name) not in seen:
        seen.add((module, name))
        imported, defined = _imports_and_definitions(module)
        if name in defined:
            return module
        if name not in imported:
            raise LookupError(f"{module} exports {name!r} but neither defines nor imports it")
        module, _, name = imported[name].partition(":")
        if not module.startswith("kanawa"):
            return module
    raise LookupError(f"{module}.{name}: a re-export cycle")
