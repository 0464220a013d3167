"""Seed 002 §3-3 ``count_tokens``: tiktoken when its encoding is cached, a fast regex estimate otherwise,
and never a network fetch (DESIGN.md "Offline facts")."""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kanawa.llm.tokens import (
    FILE_TOKENS,
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    REPLY_PRIMING_TOKENS,
    count_message_tokens,
    count_text_tokens,
    encoding_name_for_model,
    estimate_text_tokens,
)
from kanawa.types import (
    AssistantMessage,
    FilePart,
    ImagePart,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)

ENGLISH = [
    "The quick brown fox jumps over the lazy dog. Large language models read text as tokens, not "
    "characters, and the number of tokens decides both the cost of a request and whether it fits.",
    "Admissions officers read thousands of personal statements every year, and the ones they remember "
    "are rarely the ones with the most impressive achievements. They remember essays in which a student "
    "noticed something small, followed it with real curiosity, and changed because of it.",
    'def add(a: int, b: int) -> int:\n    """Add two integers."""\n    return a + b\n',
    '{"name": "search_web", "arguments": {"query": "weather", "max_results": 5, "safe": true}}',
]
JAPANESE = [
    "私は高校時代、地域の図書館でボランティア活動を続けてきました。子どもたちに絵本を読み聞かせる中で、"
    "言葉の持つ力に気づき、将来は教育学を学びたいと考えるようになりました。",
    "志望理由書を書くときに大切なのは、立派な実績を並べることではなく、自分が何に気づき、どう考え、"
    "どのように行動を変えたのかを具体的に示すことです。",
    "GPT-5のResponses APIでは、reasoning_effortを“high”に設定すると推論トークンが増えます。",
]

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point tiktoken's cache at an empty directory: no encoding is available offline."""
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    return cache


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Fail (and record) any attempt to open a connection or resolve a host."""
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return attempts


def _cached_o200k_dir() -> Path | None:
    """The directory where tiktoken would find an intact o200k_base file, if there is one."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        base = os.environ["TIKTOKEN_CACHE_DIR"]
    else:
        base = os.environ.get("DATA_GYM_CACHE_DIR", os.path.join(tempfile.gettempdir(), "data-gym-cache"))
    path = Path(base) / hashlib.sha1(O200K_URL.encode()).hexdigest() if base else None
    return path.parent if path is not None and path.is_file() else None


O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


@pytest.fixture
def o200k_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tiktoken cache holding the real o200k_base file, built offline.

    Uses the machine's own cache when it has the file; otherwise the copy of the same file shipped in
    the ``bpe-openai`` wheel (a dev dependency) — checked against tiktoken's SHA-256 — so this test
    runs everywhere without a download.
    """
    existing = _cached_o200k_dir()
    if existing is not None:
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(existing))
        return existing
    import gzip
    from importlib.resources import files

    try:
        packed = files("bpe_openai").joinpath("data/o200k_base.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError):
        pytest.skip("o200k_base is neither in tiktoken's cache nor shipped by bpe-openai")
    data = gzip.decompress(packed)
    assert hashlib.sha256(data).hexdigest() == O200K_SHA256
    cache = tmp_path / "tiktoken-o200k"
    cache.mkdir()
    (cache / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(data)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    return cache


# ------------------------------------------------------------------------------ estimator properties


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("hello", 1),
        (" hello", 1),  # a leading space joins the word
        ("hello world", 2),
        ("internationalization", 3),  # 20 letters → 3 pieces
        ("LLMRateLimitError", 3),  # split at case changes: LLMRate / Limit / Error
        ("1234567", 3),  # digits in threes
        ("東京都", 3),  # one token per Han character
        ("こんにちは", 3),  # kana: one token per two characters
        ("。、", 2),  # CJK punctuation: one each
        ("!!", 1),
        ("a\n\nb", 3),  # a newline run is one token
    ],
)
def test_estimator_counts_pieces_as_documented(text: str, expected: int) -> None:
    assert estimate_text_tokens(text) == expected


@given(st.text(max_size=80), st.text(max_size=80))
def test_estimator_is_monotonic_and_subadditive(a: str, b: str) -> None:
    joined = estimate_text_tokens(a + b)
    assert joined >= estimate_text_tokens(a)
    assert joined >= estimate_text_tokens(b)
    assert joined <= estimate_text_tokens(a) + estimate_text_tokens(b)


@given(st.text(min_size=1, max_size=200))
def test_estimator_is_positive_and_bounded_by_length(text: str) -> None:
    count = estimate_text_tokens(text)
    assert 0 <= count <= len(text)
    assert count >= 1 or text == " "


@pytest.mark.parametrize("text", ENGLISH + JAPANESE)
def test_estimator_is_deterministic_and_plausible(text: str) -> None:
    count = estimate_text_tokens(text)
    assert count == estimate_text_tokens(text)
    assert len(text) / 8 <= count <= len(text)


def test_japanese_costs_more_per_character_than_english() -> None:
    english, japanese = ENGLISH[1], JAPANESE[0]
    per_char_en = estimate_text_tokens(english) / len(english)
    per_char_ja = estimate_text_tokens(japanese) / len(japanese)
    assert per_char_ja > 2 * per_char_en


# ------------------------------------------------------------------------ encodings and the network


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("openai:gpt-5", "o200k_base"),
        ("gpt-5.2-pro", "o200k_base"),
        ("gpt-4.1-mini", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o1", "o200k_base"),
        ("openai-chat:o4-mini@http://127.0.0.1:8000/v1", "o200k_base"),
        ("chatgpt-4o-latest", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("anthropic:claude-sonnet-4-5", "cl100k_base"),
        ("ollama:llama3", "cl100k_base"),
        ("", "cl100k_base"),
        (None, "cl100k_base"),
    ],
)
def test_encoding_choice_by_model_name(model: str | None, encoding: str) -> None:
    assert encoding_name_for_model(model) == encoding


def test_absent_cache_falls_back_to_the_estimator_without_network(
    empty_cache: Path, no_network: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    import tiktoken

    def no_download(name: str) -> None:
        raise AssertionError(f"tiktoken.get_encoding({name!r}) would download")

    monkeypatch.setattr(tiktoken, "get_encoding", no_download)
    for text in ENGLISH + JAPANESE:
        for model in ("gpt-5", "gpt-4", None):
            assert count_text_tokens(text, model=model) == estimate_text_tokens(text)
    assert no_network == []
    assert list(empty_cache.iterdir()) == []  # nothing was fetched into the cache


def test_default_tmp_cache_location_is_checked_not_fetched(
    tmp_path: Path, no_network: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert count_text_tokens("offline counting", model="gpt-4o") == estimate_text_tokens("offline counting")
    assert not (tmp_path / "data-gym-cache").exists()


def test_disabled_cache_never_reaches_tiktoken(
    no_network: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken would download on every use
    assert count_text_tokens("no cache at all", model="gpt-5") == estimate_text_tokens("no cache at all")


def test_corrupt_cache_file_is_ignored_and_kept(empty_cache: Path, no_network: list[object]) -> None:
    # tiktoken would delete a file whose hash does not match and download it again
    broken = empty_cache / hashlib.sha1(O200K_URL.encode()).hexdigest()
    broken.write_bytes(b"not an encoding")
    assert count_text_tokens("hello there", model="gpt-5") == estimate_text_tokens("hello there")
    assert broken.read_bytes() == b"not an encoding"


def test_cached_o200k_counts_exactly_and_estimator_stays_close(
    o200k_cache: Path, no_network: list[object]
) -> None:
    import tiktoken

    encoding = tiktoken.get_encoding("o200k_base")
    for text in ENGLISH + JAPANESE:
        exact = len(encoding.encode_ordinary(text))
        assert count_text_tokens(text, model="gpt-5") == exact
        assert 0.6 * exact <= estimate_text_tokens(text) <= 1.5 * exact, text[:20]
    # special-token markers are plain text, never an error
    assert count_text_tokens("<|endoftext|>", model="gpt-4o") > 1


# --------------------------------------------------------------------------------- message counting


@pytest.fixture
def estimator_only(empty_cache: Path) -> None:
    """Message tests assert exact arithmetic, so pin counting to the estimator."""


def test_string_content_counts_as_text(estimator_only: None) -> None:
    assert count_message_tokens("hello world") == count_text_tokens("hello world") == 2
    assert count_message_tokens([]) == 0
    assert count_text_tokens("") == 0


def test_each_message_adds_overhead_and_its_text(estimator_only: None) -> None:
    one = count_message_tokens([UserMessage("hello world")])
    assert one == REPLY_PRIMING_TOKENS + MESSAGE_OVERHEAD_TOKENS + 2
    two = count_message_tokens([SystemMessage("be brief"), UserMessage("hello world")])
    assert two == one + MESSAGE_OVERHEAD_TOKENS + 2


def test_tool_calls_reasoning_and_results_are_counted(estimator_only: None) -> None:
    bare = count_message_tokens([AssistantMessage(text="")])
    call = ToolCall("call_1", "search_web", '{"query": "東京 天気"}')
    with_call = count_message_tokens([AssistantMessage(text="", tool_calls=(call,))])
    assert with_call - bare >= estimate_text_tokens(call.name) + estimate_text_tokens(call.arguments)
    with_reasoning = count_message_tokens(
        [AssistantMessage(text="", reasoning=(ReasoningPart(text="thinking hard"),))]
    )
    assert with_reasoning == bare + estimate_text_tokens("thinking hard")
    result = count_message_tokens([ToolMessage("call_1", "晴れ", name="search_web")])
    assert result > count_message_tokens([ToolMessage("call_1", "", name="")])


def test_images_and_files_have_fixed_estimates_text_files_count_as_text(estimator_only: None) -> None:
    base = count_message_tokens([UserMessage("look")])
    image = count_message_tokens(
        [UserMessage([TextPart("look"), ImagePart(url="https://example.com/a.png")])]
    )
    assert image == base + IMAGE_TOKENS
    pdf = count_message_tokens(
        [UserMessage([TextPart("look"), FilePart(b"%PDF-1.7 ...", media_type="application/pdf")])]
    )
    assert pdf == base + FILE_TOKENS
    note = FilePart("メモ: hello world".encode(), media_type="text/plain")
    text_file = count_message_tokens([UserMessage([TextPart("look"), note])])
    assert text_file == base + estimate_text_tokens("メモ: hello world")


def test_more_conversation_never_counts_less(estimator_only: None) -> None:
    history: list[Message] = [
        SystemMessage("You coach essays."),
        UserMessage(JAPANESE[0]),
        AssistantMessage(text=ENGLISH[0]),
    ]
    counts = [count_message_tokens(history[:n]) for n in range(len(history) + 1)]
    assert counts == sorted(counts)
    assert counts[-1] > counts[1] > 0
