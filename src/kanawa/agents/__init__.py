"""Agents (seed 002 §3-1): :class:`Agent`, the :class:`RunResult` of its runs and dynamic instructions."""

from kanawa.agents.agent import Agent, RunResult, UserInput
from kanawa.agents.instructions import InstructionsFunc

__all__ = ["Agent", "InstructionsFunc", "RunResult", "UserInput"]
