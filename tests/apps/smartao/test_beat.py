"""``apply_reflexion`` as a real Celery beat job: a worker with embedded beat, on the test broker,
learns the lessons of yesterday's evaluations on its schedule (seed 002 §4 "Celery Beat で夜間一括")."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from celery.schedules import crontab

from kanawa.apps.smartao.beat import TASK_NAME, app_from_env, make_beat_app, nightly_at, reflect_on_yesterday
from kanawa.apps.smartao.reflexion import EvalStore
from kanawa.apps.smartao.rubric import AXES, AxisScore, Rubric
from tests.server.conftest import ROOT, _broker, redis_url  # noqa: F401  (redis_url is a fixture)


def rubric(low: str) -> Rubric:
    return Rubric(
        scores=[AxisScore(axis=a, score=1 if a == low else 4, reason="理由") for a in AXES], summary=""
    )


def yesterday() -> str:
    return (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)).isoformat()


def test_the_schedule_is_nightly_at_the_configured_utc_time(tmp_path: Path) -> None:
    app = make_beat_app("memory://", data=tmp_path, at="02:30")
    entry = app.conf.beat_schedule["smartao-reflexion"]
    assert entry["task"] == TASK_NAME
    assert entry["schedule"] == crontab(hour=2, minute=30)
    assert entry["args"] == (str(tmp_path),)
    assert app.conf.timezone == "UTC"
    assert TASK_NAME in app.tasks
    assert nightly_at("03:00") == (3, 0)
    every = app_from_env({"KANAWA_CELERY_BROKER": "memory://", "KANAWA_SMARTAO_REFLEXION_EVERY": "2"})
    assert every.conf.beat_schedule["smartao-reflexion"]["schedule"] == 2.0


@pytest.mark.parametrize("bad", ["3", "24:00", "03:60", "3時", "", "-1:00"])
def test_a_bad_time_is_a_clear_error(bad: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="KANAWA_SMARTAO_REFLEXION_AT must be HH:MM"):
        make_beat_app("memory://", data=tmp_path, at=bad)


def test_missing_or_bad_settings_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="KANAWA_CELERY_BROKER is required"):
        app_from_env({})
    with pytest.raises(ValueError, match="KANAWA_SMARTAO_REFLEXION_EVERY must be"):
        app_from_env({"KANAWA_CELERY_BROKER": "memory://", "KANAWA_SMARTAO_REFLEXION_EVERY": "soon"})
    with pytest.raises(ValueError, match="positive"):
        app_from_env({"KANAWA_CELERY_BROKER": "memory://", "KANAWA_SMARTAO_REFLEXION_EVERY": "0"})


def test_the_task_learns_from_yesterday_by_default(tmp_path: Path) -> None:
    store = EvalStore(tmp_path / "evaluations.sqlite3")
    store.put("a", rubric("具体性"), day=yesterday())
    store.put("b", rubric("独自性"))  # today's: not yet
    assert list(reflect_on_yesterday(str(tmp_path))[""]) == ["具体性"]  # "": runs outside the server


def test_a_worker_with_embedded_beat_runs_the_job_on_its_schedule(tmp_path: Path, redis_url: str) -> None:  # noqa: F811
    data = tmp_path / "smartao"
    store = EvalStore(data / "evaluations.sqlite3")
    for n in range(2):
        store.put(f"e{n}", rubric("将来像"), day=yesterday())
    queue = f"kanawa-test-beat-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "KANAWA_CELERY_BROKER": _broker(redis_url),
        "KANAWA_SMARTAO_DATA": str(data),
        "KANAWA_SMARTAO_REFLEXION_EVERY": "0.5",
        "KANAWA_SMARTAO_QUEUE": queue,
    }
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "kanawa.apps.smartao.beat",
            "worker",
            "--beat",
            "--pool=solo",
            "-Q",
            queue,
            "-s",
            str(tmp_path / "beat-schedule"),
            "--loglevel=warning",
        ],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not store.latest_lessons():
            assert worker.poll() is None, "the worker exited"
            time.sleep(0.1)
        lessons = store.latest_lessons()
        assert len(lessons) == 1
        assert lessons[0].startswith(f"{yesterday()}: 「将来像」の平均が1.0点（2件）")
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
        app = make_beat_app(env["KANAWA_CELERY_BROKER"], data=data, queue=queue)
        try:  # the broker may be shared: leave no test queue behind (best effort)
            with contextlib.suppress(Exception), app.connection_for_write() as connection:
                connection.default_channel.queue_delete(queue)
        finally:
            app.close()
