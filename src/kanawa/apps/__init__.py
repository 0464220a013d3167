"""Applications built on kanawa's core: each subpackage adapts the agents, tools and stores to one job.

- :mod:`kanawa.apps.ace` — ACE (Agentic Context Engineering, seed 004): playbooks that learn.
- :mod:`kanawa.apps.smartao` — SmartAO (seed 002 §4): essay coaching for Japanese AO admissions.

Nothing here is imported by ``import kanawa``.
"""
