"""Record real provider traffic of a test run once, replay it offline after (vcrpy-compatible cassettes).

:func:`use_cassette` records the HTTP exchanges of the provider SDKs (openai, anthropic,
google-genai — streaming included) into a YAML cassette with every credential scrubbed by
:mod:`kanawa.secrets`, and replays them without a network. The pytest plugin
(:mod:`kanawa.testing.pytest_plugin`, registered as a ``pytest11`` entry point) gives each test a
cassette of its own: ``@pytest.mark.kanawa_cassette`` or the ``kanawa_cassette`` fixture, and
``--kanawa-record=none|once|new_episodes|all`` (default ``none``: replay only, never the network).

Offline test *models* (no HTTP at all: ``ScriptedLLM``, ``FunctionLLM``, ``TestLLM``) live in
:mod:`kanawa.llm.testing`; this package is for tests that keep the real adapters and SDKs. Needs the
``testing`` extra (PyYAML).
"""

from kanawa.testing.cassette import Cassette, CassetteError, MatchPart
from kanawa.testing.recorder import RecordMode, use_cassette

__all__ = ["Cassette", "CassetteError", "MatchPart", "RecordMode", "use_cassette"]
