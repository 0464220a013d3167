"""The sync/async naming rule of the public API (docs/design.md, "Sync and async names"), as a checker.

A callable's *face* is how it is called: ``sync`` (call it), ``coroutine`` (await it) or ``iterator``
(an async generator: ``async for``, which fails at once when used without ``async``, so the rule
leaves it alone). The rule:

1. Twins are ``x()`` (sync) and ``ax()`` (async) on one object; no ``x_sync``/``x_async``/``sync_x``/
   ``async_x`` spellings.
2. An object with a twin has no plain coroutine: each coroutine's name starts with ``a`` (hooks kanawa
   calls, ``on_…``, aside). ``close``/``aclose`` alone does not make an object two-faced: ``aclose()``
   is the async close everywhere.
3. A name has one face across the public API: never sync on one class and a coroutine on another.

Outside the rule: dunder methods, properties, async generators, and names a Python protocol the class
implements defines (``Sequence.index``).
"""

from __future__ import annotations

import inspect
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

Face = Literal["sync", "coroutine", "iterator"]

OWN_PACKAGES = frozenset({"kanawa", "tests"})
"""Methods defined in classes of these packages are checked; inherited ones from pydantic or the
standard library are not ours to name."""

_OTHER_SPELLINGS = re.compile(r"(^(sync|async)_)|(_(sync|async)$)")
_AWAITABLE_RETURN = re.compile(r"^(typing\.|collections\.abc\.)?(Awaitable|Coroutine)\b")


@dataclass(frozen=True, slots=True)
class Member:
    """One public callable: where it lives (``module.Class.name`` or ``module.name``), its name, face."""

    where: str
    name: str
    face: Face


def face_of(function: Callable[..., Any]) -> Face:
    if inspect.iscoroutinefunction(function):
        return "coroutine"
    if inspect.isasyncgenfunction(function):
        return "iterator"
    returns = inspect.signature(function).return_annotation
    text = returns if isinstance(returns, str) else getattr(returns, "__qualname__", "")
    return "coroutine" if _AWAITABLE_RETURN.match(str(text).strip("'\"")) else "sync"


def _own(owner: type) -> bool:
    return owner.__module__.partition(".")[0] in OWN_PACKAGES


def _protocol_names(cls: type) -> set[str]:
    """Names a class that is not ours in the MRO defines (``Sequence.index``, ``Mapping.get`` …)."""
    return {name for base in cls.__mro__[1:] if not _own(base) and base is not object for name in vars(base)}


def methods_of(cls: type) -> Iterator[Member]:
    """The public methods (static and class methods too) ``cls`` has from classes of ours."""
    fixed = _protocol_names(cls)
    for name in sorted(dir(cls)):
        if name.startswith("_") or name in fixed:
            continue
        owner = next((base for base in cls.__mro__ if name in vars(base)), None)
        if owner is None or not _own(owner):
            continue
        value = vars(owner)[name]
        if isinstance(value, staticmethod | classmethod):
            value = value.__func__
        if inspect.isfunction(value):
            yield Member(f"{cls.__module__}.{cls.__qualname__}.{name}", name, face_of(value))


def problems(classes: Iterable[type], functions: Iterable[Callable[..., Any]]) -> list[str]:
    """Every breach of the rule among ``classes`` (their methods) and ``functions``."""
    found: list[str] = []
    everything: list[Member] = []
    for cls in classes:
        members = {m.name: m for m in methods_of(cls)}
        everything.extend(members.values())
        found.extend(_twin_problems(members))
    for function in functions:
        everything.append(
            Member(f"{function.__module__}.{function.__qualname__}", function.__name__, face_of(function))
        )
    found.extend(
        f"{m.where}: say `{_suggest(m.name)}`, not `{m.name}`"
        for m in everything
        if _OTHER_SPELLINGS.search(m.name)
    )
    found.extend(_one_face_per_name(everything))
    return found


def _suggest(name: str) -> str:
    plain = _OTHER_SPELLINGS.sub("", name)
    return f"a{plain}" if "async" in name else plain


def _twin_problems(members: dict[str, Member]) -> Iterator[str]:
    pairs = [(name, f"a{name}") for name in members if f"a{name}" in members]
    for sync, async_ in pairs:
        if members[sync].face != "sync":
            yield f"{members[sync].where}: `{sync}()` beside its async twin `{async_}()` must be sync"
        if members[async_].face == "sync":
            yield f"{members[async_].where}: `{async_}()`, the async twin of `{sync}()`, must not be sync"
    twins = [sync for sync, _ in pairs if sync != "close" and members[sync].face == "sync"]
    if twins:
        for name, member in members.items():
            if member.face == "coroutine" and not name.startswith(("a", "on_")):
                beside = ", ".join(twins)
                yield f"{member.where}: a coroutine beside sync twins ({beside}) is named `a{name}()`"


def _one_face_per_name(members: Iterable[Member]) -> Iterator[str]:
    faces: dict[str, dict[Face, list[str]]] = defaultdict(lambda: defaultdict(list))
    for member in members:
        faces[member.name][member.face].append(member.where)
    for name, by_face in sorted(faces.items()):
        if by_face.get("sync") and by_face.get("coroutine"):
            sync, coroutine = sorted(by_face["sync"]), sorted(by_face["coroutine"])
            yield (
                f"`{name}` is sync on {', '.join(sync)} but a coroutine on {', '.join(coroutine)}: "
                f"the coroutine is `a{name}()`"
            )
