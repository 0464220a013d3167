"""Agents (seed 002 §3-1): :class:`Agent` and the :class:`RunResult` of its runs."""

from kanawa.agents.agent import Agent, RunResult, UserInput

__all__ = ["Agent", "RunResult", "UserInput"]
