"""SmartAO's nightly job on Celery beat (seed 002 §4: "``apply_reflexion`` は Celery Beat で夜間一括").

Run it next to the service with a Celery broker::

    KANAWA_CELERY_BROKER=redis://127.0.0.1:6379/1 KANAWA_SMARTAO_DATA=.kanawa/smartao \\
        celery -A kanawa.apps.smartao.beat worker --beat --loglevel=info

Every night at ``KANAWA_SMARTAO_REFLEXION_AT`` (``HH:MM``, UTC; default ``03:00``) the task
``kanawa.smartao.reflexion`` runs :func:`~kanawa.apps.smartao.reflexion.apply_reflexion` on the
*previous* day's evaluations in ``$KANAWA_SMARTAO_DATA/evaluations.sqlite3`` — the store the page's
runs write (``kanawa smartao serve --data``). The job is idempotent: running it again for a day
replaces that day's lessons. ``KANAWA_SMARTAO_REFLEXION_EVERY`` (seconds) replaces the nightly
schedule by a fixed interval, for trying it out; ``KANAWA_SMARTAO_QUEUE`` names its queue (default
``kanawa-smartao``, apart from the service's runs). ``kanawa smartao reflexion`` runs the same function
by hand.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from celery import Celery
from celery.schedules import crontab

from kanawa.apps.smartao.reflexion import apply_reflexion

TASK_NAME: Final = "kanawa.smartao.reflexion"
DEFAULT_DATA: Final = ".kanawa/smartao"
DEFAULT_AT: Final = "03:00"
DEFAULT_QUEUE: Final = "kanawa-smartao"


def nightly_at(text: str) -> tuple[int, int]:
    """``"HH:MM"`` (24-hour, UTC) as ``(hour, minute)``; ``ValueError`` naming the setting otherwise."""
    hour, sep, minute = text.strip().partition(":")
    if not (sep and hour.isdigit() and minute.isdigit() and int(hour) < 24 and int(minute) < 60):
        raise ValueError(f"KANAWA_SMARTAO_REFLEXION_AT must be HH:MM (24-hour, UTC), not {text!r}")
    return int(hour), int(minute)


def reflect_on_yesterday(data: str, day: str | None = None) -> dict[str, dict[str, str]]:
    """The task: lessons from ``day``'s evaluations (default: yesterday, UTC — the night after it)."""
    when = day or (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)).isoformat()
    return apply_reflexion(Path(data) / "evaluations.sqlite3", day=when)


def make_beat_app(
    broker: str,
    *,
    data: str | Path,
    at: str = DEFAULT_AT,
    every: float | None = None,
    queue: str = DEFAULT_QUEUE,
) -> Celery:
    """A Celery app with the reflexion task and its beat schedule (nightly at ``at``, or every
    ``every`` seconds), sending to ``queue``."""
    hour, minute = nightly_at(at)
    if every is not None and every <= 0:
        raise ValueError(f"KANAWA_SMARTAO_REFLEXION_EVERY must be a positive number of seconds, not {every}")
    app = Celery("kanawa-smartao", broker=broker)
    app.conf.update(
        timezone="UTC",
        task_default_queue=queue,
        enable_utc=True,
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        beat_schedule={
            "smartao-reflexion": {
                "task": TASK_NAME,
                "schedule": crontab(hour=hour, minute=minute) if every is None else every,
                "args": (str(data),),
            }
        },
    )
    app.task(name=TASK_NAME)(reflect_on_yesterday)
    return app


def app_from_env(env: Mapping[str, str] = os.environ) -> Celery:
    """The app ``celery -A kanawa.apps.smartao.beat`` loads, configured from the environment."""
    broker = env.get("KANAWA_CELERY_BROKER", "").strip()
    if not broker:
        raise ValueError("KANAWA_CELERY_BROKER is required for SmartAO's nightly job (a Redis or AMQP URL)")
    every_text = env.get("KANAWA_SMARTAO_REFLEXION_EVERY", "").strip()
    try:
        every = float(every_text) if every_text else None
    except ValueError:
        raise ValueError(
            f"KANAWA_SMARTAO_REFLEXION_EVERY must be a number of seconds, not {every_text!r}"
        ) from None
    return make_beat_app(
        broker,
        data=env.get("KANAWA_SMARTAO_DATA", "").strip() or DEFAULT_DATA,
        at=env.get("KANAWA_SMARTAO_REFLEXION_AT", "").strip() or DEFAULT_AT,
        every=every,
        queue=env.get("KANAWA_SMARTAO_QUEUE", "").strip() or DEFAULT_QUEUE,
    )


_APP: Celery | None = None


def __getattr__(name: str) -> Any:
    """``app`` (what ``celery -A`` looks up) is made on first use, so importing this module needs no
    broker."""
    global _APP
    if name in ("app", "celery"):
        if _APP is None:
            _APP = app_from_env()
        return _APP
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_AT",
    "DEFAULT_QUEUE",
    "TASK_NAME",
    "app_from_env",
    "make_beat_app",
    "nightly_at",
    "reflect_on_yesterday",
]
