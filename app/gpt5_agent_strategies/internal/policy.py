"""System instruction composition (seed 000 §4, seed 001 §4.4): kanawa's composer plus the run context.

``build_system_instruction(base_instruction, prompt_policy_overrides)`` is kanawa's: instruction, then
persistence, context gathering, uncertainty and tool preamble policies, then the extra policy; empty
overrides keep the defaults, plain text becomes ``extra_policy``, a JSON object replaces only the known
keys (unknown keys ignored, the four policy blocks wrapped in their tags when given bare).
``context`` (runtime data) is a separate concept (seed 000 §8) and goes after the policies in a
``<context>`` block. When it is the output of a Dify knowledge-retrieval node (a list of
``{"content", "metadata"}`` items), the block holds the contents and :func:`retriever_resources` gives
the citations the strategy reports with ``create_retriever_resource_message`` (seed 000 §2.2).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kanawa.prompts.policies import build_system_instruction

__all__ = ["build_system_instruction", "compose_system_prompt", "retriever_resources"]

_RESOURCE_FIELDS = (
    "position",
    "dataset_id",
    "dataset_name",
    "document_id",
    "document_name",
    "data_source_type",
    "segment_id",
    "retriever_from",
    "score",
    "hit_count",
    "word_count",
    "segment_position",
    "index_node_hash",
    "page",
)


def _knowledge_items(context: object) -> list[Mapping[str, Any]]:
    if not isinstance(context, list) or not context:
        return []
    items = [c for c in context if isinstance(c, Mapping) and isinstance(c.get("content"), str)]
    return items if len(items) == len(context) else []


def retriever_resources(context: object) -> list[dict[str, Any]]:
    """The citations of a knowledge-retrieval ``context`` (empty for any other context)."""
    resources: list[dict[str, Any]] = []
    for index, item in enumerate(_knowledge_items(context), start=1):
        metadata = item.get("metadata")
        meta: Mapping[str, Any] = metadata if isinstance(metadata, Mapping) else {}
        resource = {key: meta[key] for key in _RESOURCE_FIELDS if meta.get(key) is not None}
        resource.setdefault("position", index)
        resource["content"] = item["content"]
        if isinstance(meta.get("doc_metadata"), Mapping):
            resource["doc_metadata"] = dict(meta["doc_metadata"])
        resources.append(resource)
    return resources


def _context_text(context: object) -> str:
    if context is None:
        return ""
    if isinstance(context, str):
        return context.strip()
    knowledge = _knowledge_items(context)
    if knowledge:
        return "\n\n".join(str(item["content"]).strip() for item in knowledge)
    try:
        return json.dumps(context, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(context)


def compose_system_prompt(instruction: str, prompt_policy_overrides: str | None, context: object) -> str:
    """The whole system message of a run: the composed policies and, if given, the context block."""
    system = build_system_instruction(instruction or "", prompt_policy_overrides)
    text = _context_text(context)
    return f"{system}\n\n<context>\n{text}\n</context>" if text else system
