"""The server's layers import one way: ``http`` → ``runs`` → ``store``.

Every module under ``kanawa/server/`` is parsed with :mod:`ast` and every import statement in it is
read — at module level, inside functions, under ``if TYPE_CHECKING:`` — relative ones resolved. The
store imports nothing of the run layer or the HTTP layer (nor any web framework), the run layer
nothing of the HTTP layer; not directly, and not through another server module (``settings``,
``registry``, ``extensions`` at the top of the package sit beside the layers)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

import kanawa

ROOT = Path(kanawa.__file__).parent
SERVER = ROOT / "server"
LAYERS = ("store", "runs", "http")
FORBIDDEN: dict[str, tuple[str, ...]] = {"store": ("runs", "http"), "runs": ("http",), "http": ()}
"""What each layer must never reach."""
WEB_FRAMEWORKS = ("fastapi", "starlette", "sse_starlette", "uvicorn")


def module_of(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_of(module: str) -> Path | None:
    path = ROOT.parent.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(source: str, module: str, *, is_package: bool) -> set[str]:
    """Every module an import statement anywhere in ``source`` names (``from a import b`` names
    ``a`` and, when ``b`` is a module, ``a.b``)."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
            found.update(
                f"{target}.{alias.name}" for alias in node.names if source_of(f"{target}.{alias.name}")
            )
    return found


@cache
def server_imports(module: str) -> frozenset[str]:
    """The ``kanawa.server`` modules ``module`` imports (any framework too, by its top name)."""
    path = source_of(module)
    assert path is not None, module
    names = imported_modules(path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py")
    return frozenset(n for n in names if n.startswith("kanawa.server") or n.split(".")[0] in WEB_FRAMEWORKS)


def reachable(module: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Every module reachable from ``module`` through ``kanawa.server`` imports, with the path there."""
    seen = {module}
    stack: list[tuple[str, tuple[str, ...]]] = [(module, (module,))]
    while stack:
        current, path = stack.pop()
        for target in server_imports(current):
            if target in seen:
                continue
            seen.add(target)
            yield target, (*path, target)
            if target.startswith("kanawa.server") and source_of(target) is not None:
                stack.append((target, (*path, target)))


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["kanawa", "server"] and parts[2] in LAYERS else None


def layer_modules(layer: str) -> list[str]:
    return sorted(module_of(path) for path in (SERVER / layer).rglob("*.py"))


def test_the_server_is_three_layer_packages() -> None:
    for layer in LAYERS:
        assert (SERVER / layer / "__init__.py").is_file(), f"kanawa/server/{layer}/ is not a package"
        assert len(layer_modules(layer)) > 1
    assert (SERVER / "http" / "protocols" / "kanawa_sse.py").is_file()


@pytest.mark.parametrize("layer", ["store", "runs"])
def test_a_layer_never_reaches_the_layers_above_it(layer: str) -> None:
    crossings = [
        " → ".join(path)
        for module in layer_modules(layer)
        for target, path in reachable(module)
        if layer_of(target) in FORBIDDEN[layer]
    ]
    assert crossings == []


def test_the_store_knows_no_web_framework() -> None:
    crossings = [
        " → ".join(path)
        for module in layer_modules("store")
        for target, path in reachable(module)
        if target.split(".")[0] in WEB_FRAMEWORKS
    ]
    assert crossings == []


def test_every_kind_of_import_is_seen() -> None:
    """The reader finds imports under ``TYPE_CHECKING``, inside functions and relative ones."""
    source = """
from typing import TYPE_CHECKING
from . import memory
from ..runs.manager import RunManager
if TYPE_CHECKING:
    from kanawa.server.http.direct import DirectSender
def later():
    import kanawa.server.http.app
"""
    found = imported_modules(source, "kanawa.server.store.base", is_package=False)
    assert {
        "kanawa.server.store.memory",
        "kanawa.server.runs.manager",
        "kanawa.server.http.direct",
        "kanawa.server.http.app",
    } <= found


def test_the_apps_own_routes_are_flat_not_layered_routers() -> None:
    """A router kept as a layer holds its frames for as long as each stream through it lasts; the
    built-in routers' routes are put in the app's route list directly (``_add_routes``)."""
    from starlette.routing import Route

    from kanawa.server import ServerSettings, create_app

    app = create_app(settings=ServerSettings(api_keys="k-0123456789abcdef:t"))
    paths = {route.path: route for route in app.router.routes if isinstance(route, Route)}
    for path in ("/v1/runs", "/v1/responses", "/v1/chat/completions", "/v1/models", "/v1/whoami"):
        assert path in paths, path
