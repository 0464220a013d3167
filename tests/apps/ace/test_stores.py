"""Part 2: PlaybookStore on JSON files and SQLite — load/save, atomic delta application, concurrent
curators losing nothing, embeddings stored with the playbooks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from kanawa.apps.ace.operations import AddOp, TagOp
from kanawa.apps.ace.playbook import Playbook
from kanawa.apps.ace.store.base import PlaybookStore
from kanawa.apps.ace.store.json_store import JsonPlaybookStore
from kanawa.apps.ace.store.opening import open_playbook_store
from kanawa.apps.ace.store.sqlite_store import SQLitePlaybookStore


@pytest.fixture(params=["json", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> PlaybookStore:
    if request.param == "json":
        return JsonPlaybookStore(root=tmp_path / "playbooks")
    return SQLitePlaybookStore(path=tmp_path / "playbooks.sqlite3")


async def test_missing_dataset_loads_as_empty_playbook(store: PlaybookStore) -> None:
    assert len(await store.aload("nothing-yet")) == 0
    assert await store.datasets() == []


async def test_save_and_load_round_trip_keyed_by_dataset(store: PlaybookStore, playbook: Playbook) -> None:
    await store.asave("appworld", playbook)
    await store.asave("finance", Playbook())
    assert await store.aload("appworld") == playbook
    assert await store.datasets() == ["appworld", "finance"]


async def test_apply_persists_and_returns_the_audit(store: PlaybookStore, playbook: Playbook) -> None:
    await store.asave("appworld", playbook)
    audit = await store.aapply(
        "appworld", [AddOp(section="OTHERS", content="new"), TagOp(bullet_id="shr-00001", tag="helpful")]
    )
    assert [a.status for a in audit] == ["applied", "applied"]
    loaded = await store.aload("appworld")
    assert loaded.get("misc-00006").content == "new"  # type: ignore[union-attr]
    assert loaded.get("shr-00001").helpful == 4  # type: ignore[union-attr]


async def test_concurrent_curators_lose_nothing(store: PlaybookStore, playbook: Playbook) -> None:
    await store.asave("appworld", playbook)

    async def curator(name: str) -> None:
        for i in range(10):
            await store.aapply(
                "appworld",
                [
                    AddOp(section="OTHERS", content=f"{name} insight {i}"),
                    TagOp(bullet_id="shr-00001", tag="helpful"),
                ],
            )

    await asyncio.gather(curator("a"), curator("b"), curator("c"))
    final = await store.aload("appworld")
    assert len(final) == 5 + 30
    assert final.get("shr-00001").helpful == 3 + 30  # type: ignore[union-attr]
    assert len({b.id for b in final}) == 35
    assert final.next_counter == 36


async def test_embeddings_are_stored_by_model_and_content_hash(store: PlaybookStore) -> None:
    rows = {"h1": np.arange(4, dtype=np.float32), "h2": np.ones(4, dtype=np.float32)}
    await store.save_vectors("model-a", rows)
    await store.save_vectors("model-a", {"h3": np.zeros(4, dtype=np.float32)})
    found = await store.load_vectors("model-a", ["h1", "h3", "missing"])
    assert sorted(found) == ["h1", "h3"]
    np.testing.assert_array_equal(found["h1"], rows["h1"])
    assert await store.load_vectors("model-b", ["h1"]) == {}


async def test_dataset_names_are_checked(store: PlaybookStore) -> None:
    with pytest.raises(ValueError, match=r"dataset name '\.\./x' is not valid"):
        await store.aload("../x")


async def test_open_playbook_store_picks_the_backend_from_the_location(tmp_path: Path) -> None:
    assert isinstance(await open_playbook_store(location=tmp_path / "dir"), JsonPlaybookStore)
    assert isinstance(await open_playbook_store(location=tmp_path / "p.sqlite3"), SQLitePlaybookStore)
    assert isinstance(await open_playbook_store(location=f"sqlite:///{tmp_path}/q.db"), SQLitePlaybookStore)


async def test_json_store_writes_playbooks_as_readable_json_files(tmp_path: Path, playbook: Playbook) -> None:
    store = JsonPlaybookStore(root=tmp_path)
    await store.asave("appworld", playbook)
    text = await asyncio.to_thread((tmp_path / "appworld.json").read_text)
    assert Playbook.model_validate_json(text) == playbook
    assert not await asyncio.to_thread(lambda: list(tmp_path.glob("*.tmp")))


_CURATOR_PROCESS = """
import asyncio, sys
from kanawa.apps.ace.operations import AddOp, TagOp
from kanawa.apps.ace.store.opening import open_playbook_store

async def main():
    store = await open_playbook_store(location=sys.argv[1])
    for i in range(10):
        await store.aapply("shared", [AddOp(section="OTHERS", content=f"{sys.argv[2]} {i}"),
                                     TagOp(bullet_id="shr-00001", tag="helpful")])

asyncio.run(main())
"""


@pytest.mark.parametrize("location", ["playbooks", "playbooks.sqlite3"])
async def test_curators_in_separate_processes_lose_nothing(
    tmp_path: Path, playbook: Playbook, location: str
) -> None:
    import sys

    target = str(tmp_path / location)
    store = await open_playbook_store(location=target)
    await store.asave("shared", playbook)
    procs = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", _CURATOR_PROCESS, target, name)
        for name in ("left", "right")
    ]
    assert [await proc.wait() for proc in procs] == [0, 0]
    final = await store.aload("shared")
    assert len(final) == 25
    assert final.get("shr-00001").helpful == 23  # type: ignore[union-attr]
