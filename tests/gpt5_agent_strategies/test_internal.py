"""The strategy engine's pure parts: policies, iteration config, tool output files, message conversion
(seed 001 §4.4, §4.6–§4.8; seed 000 §4–§7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dify_plugin.entities.tool import ToolInvokeMessage

from kanawa.tools import FileSandbox, ToolArgumentsError
from kanawa.types import AssistantMessage, ToolCall, ToolCallArgsDelta, ToolCallStarted
from tests.gpt5_agent_strategies.conftest import PLUGIN
from tests.wire.dify_paths import plugin_modules

flow, loop, policy, tooling, template = plugin_modules(
    PLUGIN, "internal.flow", "internal.loop", "internal.policy", "internal.tooling", "prompt.template"
)
_Calls, round_thought, to_kanawa_messages, to_prompt_messages = (
    flow._Calls,
    flow.round_thought,
    flow.to_kanawa_messages,
    flow.to_prompt_messages,
)
iteration_config = loop.iteration_config
build_system_instruction, compose_system_prompt = (
    policy.build_system_instruction,
    policy.compose_system_prompt,
)
MAX_BLOB_FILE_BYTES, parse_tool_arguments = tooling.MAX_BLOB_FILE_BYTES, tooling.parse_tool_arguments
summarize_tool_messages = tooling.summarize_tool_messages
PERSISTENCE_POLICY, TOOL_PREAMBLE_POLICY = template.PERSISTENCE_POLICY, template.TOOL_PREAMBLE_POLICY


def test_empty_overrides_give_instruction_and_the_four_default_blocks() -> None:
    text = build_system_instruction("Do the task.", "")
    assert text.startswith("Do the task.")
    assert PERSISTENCE_POLICY.strip() in text
    assert text.index(PERSISTENCE_POLICY.strip()) < text.index(TOOL_PREAMBLE_POLICY.strip())


def test_plain_text_override_is_appended_as_extra_policy() -> None:
    assert build_system_instruction("Task.", "Always cite sources.").endswith("Always cite sources.")


def test_json_override_replaces_known_keys_wraps_bare_text_and_ignores_unknown_keys() -> None:
    text = build_system_instruction("Task.", '{"persistence_policy": "Stop early.", "mystery": "ignored"}')
    assert (
        "<persistence>\nStop early.\n</persistence>" in text
        or "<persistence>Stop early.</persistence>" in text
    )
    assert PERSISTENCE_POLICY.strip() not in text
    assert "ignored" not in text


def test_context_goes_after_the_policies_in_its_own_block() -> None:
    text = compose_system_prompt("Task.", None, ["a", 1])
    assert text.endswith('<context>\n["a", 1]\n</context>')
    assert compose_system_prompt("Task.", None, None) == build_system_instruction("Task.", None)


def test_maximum_iterations_maps_to_max_steps_with_finalize() -> None:
    config = iteration_config(6)
    assert (config.max_steps, config.on_max_steps) == (6, "finalize")
    assert iteration_config(30.0).max_steps == 30
    for bad in (0, 31, 1.5, True, "6"):
        with pytest.raises(ValueError, match="maximum_iterations"):
            iteration_config(bad)


@pytest.mark.parametrize(("raw", "expected"), [("", {}), ('{"a": 1}', {"a": 1})])
def test_tool_arguments_parse(raw: str, expected: dict[str, int]) -> None:
    assert parse_tool_arguments(raw) == expected


@pytest.mark.parametrize("raw", ["[1]", "nope", 5, '"s"'])
def test_tool_arguments_refused(raw: object) -> None:
    with pytest.raises(ToolArgumentsError):
        parse_tool_arguments(raw)  # type: ignore[arg-type]


def _image(path: str) -> ToolInvokeMessage:
    return ToolInvokeMessage(
        type=ToolInvokeMessage.MessageType.IMAGE, message=ToolInvokeMessage.TextMessage(text=path)
    )


def test_local_image_under_files_root_is_sent_as_blob(tmp_path: Path) -> None:
    (tmp_path / "chart.png").write_bytes(b"\x89PNG fake")
    output = summarize_tool_messages([_image(str(tmp_path / "chart.png"))], FileSandbox(root=tmp_path))
    (message,) = output.user_messages
    assert message.type == ToolInvokeMessage.MessageType.BLOB
    assert message.message.blob == b"\x89PNG fake"  # type: ignore[union-attr]
    assert message.meta == {"mime_type": "image/png", "filename": "chart.png"}


def test_paths_outside_files_root_and_oversized_files_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "files"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("no")
    (root / "big.bin").write_bytes(b"x" * (MAX_BLOB_FILE_BYTES + 1))
    sandbox = FileSandbox(root=root, max_bytes=MAX_BLOB_FILE_BYTES)
    output = summarize_tool_messages(
        [_image(str(root / ".." / "secret.txt")), _image(str(root / "big.bin"))], sandbox
    )
    assert output.user_messages == []
    assert all(note.startswith("file refused") for note in output.text)


def test_image_links_and_blobs_are_passed_to_the_user() -> None:
    link = ToolInvokeMessage(
        type=ToolInvokeMessage.MessageType.IMAGE_LINK,
        message=ToolInvokeMessage.TextMessage(text="https://x/y.png"),
    )
    blob = ToolInvokeMessage(
        type=ToolInvokeMessage.MessageType.BLOB, message=ToolInvokeMessage.BlobMessage(blob=b"1")
    )
    huge = ToolInvokeMessage(
        type=ToolInvokeMessage.MessageType.BLOB,
        message=ToolInvokeMessage.BlobMessage(blob=b"1" * (MAX_BLOB_FILE_BYTES + 1)),
    )
    output = summarize_tool_messages([link, blob, huge], FileSandbox(root="/nonexistent-root"))
    assert [m.type for m in output.user_messages] == [
        ToolInvokeMessage.MessageType.IMAGE_LINK,
        ToolInvokeMessage.MessageType.BLOB,
    ]
    assert output.text[-1].startswith("file refused")


def test_streamed_tool_calls_are_assembled_by_id() -> None:
    calls = _Calls()
    events = calls.feed([{"id": "a", "function": {"name": "t", "arguments": '{"x"'}}])
    events += calls.feed([{"id": "", "function": {"name": "", "arguments": ": 1}"}}])
    events += calls.feed([{"id": "b", "function": {"name": "u", "arguments": "{}"}}])
    assert calls.calls() == (ToolCall("a", "t", '{"x": 1}'), ToolCall("b", "u", "{}"))
    assert [type(e) for e in events] == [
        ToolCallStarted,
        ToolCallArgsDelta,
        ToolCallArgsDelta,
        ToolCallStarted,
        ToolCallArgsDelta,
    ]


def test_assistant_messages_keep_opaque_body_both_ways() -> None:
    body = {"kanawa_responses": {"version": 1}}
    message = AssistantMessage(
        text="hi", tool_calls=(ToolCall("c", "t", "{}"),), provider_details={"dify_opaque_body": body}
    )
    (dify,) = to_prompt_messages([message])
    assert dify.opaque_body == body
    (back,) = to_kanawa_messages([dify])
    assert back == message


def test_round_thought_falls_back_only_without_a_think_block() -> None:
    assert round_thought("<think>mine</think>x", ["t"]) == ""
    assert round_thought("no think", ["lookup"]).startswith("<think>")
    assert "lookup" in round_thought("no think", ["lookup"])


def test_only_knowledge_lists_become_citations() -> None:
    assert policy.retriever_resources("plain text") == []
    assert policy.retriever_resources([{"content": "a"}, "b"]) == []
    assert policy.retriever_resources([{"content": "a", "metadata": {"segment_id": "s", "page": 3}}]) == [
        {"segment_id": "s", "page": 3, "position": 1, "content": "a"}
    ]
