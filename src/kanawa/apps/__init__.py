"""Applications built on kanawa's core: each subpackage adapts the agents, tools and stores to one job.

- :mod:`kanawa.apps.ace` — ACE (Agentic Context Engineering, seed 004): playbooks that learn.

Nothing here is imported by ``import kanawa``.
"""
