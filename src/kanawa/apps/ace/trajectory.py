"""``Trajectory``: what one Generator run did (seed 004 "Trajectoryモデル", "JSON保存形式").

The fields, their types and the JSON form are the seed's, unchanged: ``model_dump_json()`` writes the
seed's example shape and ``model_validate_json()`` reads it back equal (Property 1); a value of the
wrong type is a pydantic ``ValidationError`` (Property 2). ``created_at`` is the seed's naive local
time (``datetime.now``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class Trajectory(BaseModel):
    """The Generator's record of one run: the answer, the steps that led to it and the bullets it used.

    ``status="failure"`` comes with ``error_message`` (an LLM or search failure never raises out of
    :meth:`GeneratorAgent.run`; seed 004 "Error Handling").
    """

    query: str
    dataset: str
    generated_answer: str
    reasoning_steps: list[str]
    used_bullet_ids: list[str]
    status: Literal["success", "failure"]
    error_message: str | None = None
    created_at: datetime = Field(default_factory=datetime.now)


__all__ = ["Trajectory"]
