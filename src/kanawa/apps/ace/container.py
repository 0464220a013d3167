"""``Container``: the ACE parts wired with ``dependency_injector`` (seed 004 "DIコンテナ拡張").

Configuration (``container.config.from_dict({...})``)::

    {"llm": {"provider": "openai", "model": "gpt-5", "api_key": None, "base_url": None},
     "store": {"location": ".kanawa/playbooks"},
     "prompts": {"dir": "prompts/generator"},
     "generator": {"top_k": 10}}

Settings are read with bracket access — ``config.llm["provider"]`` — never ``config.llm.provider``:
``provider`` is an attribute of dependency_injector's configuration options themselves, so the dotted
form resolves to the wrong object (seed 004 "Implementation Notes"; a test checks this file).

``playbook_store`` is a file store, made once: ``store = container.playbook_store()`` (no ``await``) —
a JSON directory, or a SQLite file for a ``.sqlite3`` / ``.db`` location. A PostgreSQL store needs a
connection pool, which only an event loop can open: ``await open_playbook_store(location=url)``, then
``container.playbook_store.override(providers.Object(store))``. The others are ready objects too;
``llm_client`` may be overridden with a test model the same way
(``container.llm_client.override(providers.Object(FunctionLLM(...)))``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dependency_injector import containers, providers

from kanawa.apps.ace.generator import GeneratorAgent
from kanawa.apps.ace.prompt_builder import PromptBuilder
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.store.base import DEFAULT_DIR, PlaybookStore
from kanawa.llm.adapter import LLMAdapter

DEFAULT_CONFIG: dict[str, Any] = {
    "llm": {"provider": None, "model": None, "api_key": None, "base_url": None},
    "store": {"location": str(DEFAULT_DIR)},
    "prompts": {"dir": "prompts/generator"},
    "generator": {"top_k": 10},
}
"""Used for every key the caller's configuration leaves out."""


def create_chat_model(
    provider: str | None, model: str | None = None, api_key: str | None = None, base_url: str | None = None
) -> LLMAdapter:
    """The seed's ``create_chat_model``: a kanawa adapter for ``provider`` and ``model``
    (``provider="test"`` is the offline TestLLM)."""
    from kanawa.llm.models import resolve_model

    if not provider:
        raise ValueError("config llm['provider'] is required (openai, anthropic, gemini, openai-chat, test)")
    spec = provider if provider == "test" or not model else f"{provider}:{model}"
    kwargs: dict[str, Any] = {}
    if api_key:
        kwargs["api_key"] = api_key
    if base_url:
        kwargs["base_url"] = base_url
    return resolve_model(spec, **kwargs)


def create_store(location: str | None = None) -> PlaybookStore:
    """A file store (JSON directory or SQLite file); PostgreSQL needs
    ``await open_playbook_store(location=url)``."""
    from kanawa.apps.ace.store.json_store import JsonPlaybookStore
    from kanawa.apps.ace.store.sqlite_store import SQLitePlaybookStore

    text = str(location or DEFAULT_DIR)
    if text.startswith(("postgresql://", "postgres://")):
        raise ValueError(
            "a PostgreSQL store is opened asynchronously: await open_playbook_store(location=url)"
        )
    if text.endswith((".sqlite3", ".sqlite", ".db")):
        return SQLitePlaybookStore(path=Path(text.removeprefix("sqlite:///")))
    return JsonPlaybookStore(root=Path(text))


class Container(containers.DeclarativeContainer):
    """Store, search, LLM client, prompt builder and Generator, built from ``config``."""

    config = providers.Configuration(default=DEFAULT_CONFIG)

    playbook_store = providers.Singleton(create_store, location=config.store["location"])

    hybrid_search = providers.Singleton(HybridSearch, store=playbook_store)

    # config.llm["provider"], not config.llm.provider (see the module docstring)
    llm_client = providers.Singleton(
        create_chat_model,
        provider=config.llm["provider"],
        model=config.llm["model"],
        api_key=config.llm["api_key"],
        base_url=config.llm["base_url"],
    )

    prompt_builder = providers.Singleton(PromptBuilder, prompts_dir=config.prompts["dir"])

    generator_agent = providers.Factory(
        GeneratorAgent,
        playbook_store=playbook_store,
        hybrid_search=hybrid_search,
        llm_client=llm_client,
        prompt_builder=prompt_builder,
        top_k=config.generator["top_k"].as_(int),
    )


__all__ = ["Container", "create_chat_model", "create_store"]
