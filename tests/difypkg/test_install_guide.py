"""The Dify install guide (docs/dify-plugins.md and docs/dify-plugins.ja.md) as a user follows it.

Each fenced block that a user could copy carries an HTML comment on the line before it (invisible on the
rendered page): ``<!-- run -->`` for a command that runs on the user's side, ``<!-- output -->`` for
what the run block before it prints, ``<!-- not run: why -->`` for what needs a Dify host or Dify's own
``dify`` CLI (neither exists here). The run blocks are executed in order, exactly as written, with bash
in a copy of the repository (with a ``.venv`` of its own), and their output is compared with the page's. The
Japanese page must show the same blocks; its tables must say what the plugins' YAML says.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sysconfig
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.wire.dify_paths import REPO

PAGES = {"en": REPO / "docs" / "dify-plugins.md", "ja": REPO / "docs" / "dify-plugins.ja.md"}
PLUGINS = ("openai_gpt5_responses", "gpt5_agent_strategies")
SHELL_LANGS = {"bash", "sh", "shell", "console"}
_MARKER = re.compile(r"<!-- (run|output|not run: [^>]+?) -->")
_FENCE = re.compile(r"^```(\S*)")


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, its marker kind (``run``, ``output``, ``not run`` or ``None``)."""

    lang: str
    kind: str | None
    text: str
    line: int


def page_blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, with the marker on the last non-blank line before its fence."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        before = next((text.strip() for text in reversed(lines[:i]) if text.strip()), "")
        marker = _MARKER.fullmatch(before)
        kind = None if marker is None else ("not run" if marker[1].startswith("not run") else marker[1])
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        body = "".join(line + "\n" for line in lines[i + 1 : end])
        found.append(Block(lang=fence[1], kind=kind, text=body, line=i + 1))
        i = end + 1
    return found


def built_package_names() -> set[str]:
    """``<name>-<version>.difypkg`` of each plugin, as ``tools/difypkg.py`` names them."""
    names = set()
    for plugin in PLUGINS:
        manifest = yaml.safe_load((REPO / "app" / plugin / "manifest.yaml").read_text(encoding="utf-8"))
        names.add(f"{manifest['name']}-{manifest['version']}.difypkg")
    return names


# ---------------------------------------------------------------------------------------------------
# markers: nothing a user copies is left out of the test by accident


@pytest.mark.parametrize("lang", sorted(PAGES))
def test_every_command_block_says_whether_it_is_run(lang: str) -> None:
    blocks = page_blocks(PAGES[lang])
    assert any(b.kind == "run" for b in blocks)
    previous: Block | None = None
    for block in blocks:
        where = f"{PAGES[lang].name}:{block.line}"
        if block.lang in SHELL_LANGS or block.lang in {"yaml", "ini"}:
            assert block.kind in {"run", "not run"}, (
                f"{where}: a {block.lang} block needs <!-- run --> or <!-- not run: … -->"
            )
        if block.kind == "run":
            assert block.lang == "bash", f"{where}: run blocks are bash"
        if block.kind == "output":
            assert block.lang == "text", f"{where}: an output block is text"
            assert previous is not None, f"{where}: output must follow a run block"
            assert previous.kind == "run", f"{where}: output must follow a run block"
        if block.lang == "python":
            pytest.fail(f"{where}: the install guide shows commands, not Python programs")
        previous = block


def test_the_japanese_page_shows_the_same_commands_and_outputs() -> None:
    def marked(lang: str) -> list[tuple[str | None, str, str]]:
        return [(b.kind, b.lang, b.text) for b in page_blocks(PAGES[lang]) if b.kind is not None]

    assert marked("ja") == marked("en")


# ---------------------------------------------------------------------------------------------------
# the run blocks, as written, in a copy of the repository


def _repository_copy(dest: Path) -> Path:
    """What the guide's commands touch: the Makefile, the plugins, the packager and kanawa's sources,
    with a ``.venv`` of the copy's own (:func:`_own_venv`).

    The shared environment is never linked in: ``make`` re-syncs ``.venv`` whenever ``pyproject.toml``
    is newer than ``.venv/.synced`` (a fresh checkout or worktree, an edited ``pyproject.toml``), and a
    re-sync from the copy would reinstall the environment the suite itself is running in. uv's
    bootstrap is linked (the Makefile's ``$(UV)`` must exist even when nothing is synced).
    """
    for name in ("Makefile", "pyproject.toml", "uv.lock"):
        shutil.copy2(REPO / name, dest / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "node_modules", "*.difypkg", ".venv", ".env")
    for folder in ("app", "tools", "src/kanawa"):
        shutil.copytree(REPO / folder, dest / folder, ignore=skip, copy_function=shutil.copy2)
    _own_venv(dest / ".venv")
    boot = REPO / ".cache" / "uv-bootstrap"
    if boot.is_dir():
        (dest / ".cache").mkdir()
        (dest / ".cache" / "uv-bootstrap").symlink_to(boot)
    return dest


def _own_venv(root: Path) -> None:
    """A venv at ``root`` that sees the running environment's packages (the packager's ``pyyaml`` and
    ``pathspec``) read-only, through a ``.pth`` file, and is marked synced for ``make``: nothing the
    guide runs can install into the suite's own environment, and no sync or download is needed."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    python = root / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    shared = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "_suite_packages.pth").write_text(f"import site; site.addsitedir({shared!r})\n")
    (root / ".synced").touch()  # after the copy of pyproject.toml and uv.lock: up to date for make


def _user_env() -> dict[str, str]:
    """The caller's environment less what an outer ``make`` or venv would leak into a user's shell."""
    leaked = {
        "MAKEFLAGS",
        "MFLAGS",
        "MAKELEVEL",
        "MAKEOVERRIDES",
        "VIRTUAL_ENV",
        "PYTHONPATH",
        "PYTEST_ADDOPTS",
    }
    return {k: v for k, v in os.environ.items() if k not in leaked}


def _bash(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=cwd,
        env=_user_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.timeout(900)
def test_every_run_block_runs_as_written_and_prints_what_the_page_shows(tmp_path: Path) -> None:
    root = _repository_copy(tmp_path)
    synced = _bash("make -q .venv/.synced", root)
    assert synced.returncode == 0, f"make would sync the copy's .venv:\n{synced.stdout}{synced.stderr}"

    blocks = page_blocks(PAGES["en"])
    last: subprocess.CompletedProcess[str] | None = None
    ran = 0
    for block in blocks:
        if block.kind == "run":
            last = _bash(block.text, root)
            ran += 1
            assert last.returncode == 0, f"line {block.line}: {block.text}\n{last.stdout}\n{last.stderr}"
        elif block.kind == "output":
            assert last is not None
            assert last.stdout == block.text, (
                f"line {block.line}: the page shows\n{block.text}\nthe command printed\n{last.stdout}"
            )
            last = None
    assert ran >= 5
    for name in built_package_names():
        assert (root / "dist" / name).is_file(), f"the guide's commands did not build dist/{name}"


def test_make_plugins_is_the_packager_command_the_page_shows() -> None:
    """``make plugins`` and the page's direct call run the same packager over the same plugins."""
    recipe = re.search(r"^plugins:.*\n\t(.+)$", (REPO / "Makefile").read_text(encoding="utf-8"), re.MULTILINE)
    assert recipe is not None
    direct = next(
        b.text.strip() for b in page_blocks(PAGES["en"]) if b.kind == "run" and "tools/difypkg.py" in b.text
    )
    assert recipe[1].replace("$(BIN)/", ".venv/bin/") == direct


# ---------------------------------------------------------------------------------------------------
# what is not run here still agrees with what the run blocks make


def test_the_signing_steps_name_the_built_packages_and_one_key_pair() -> None:
    blocks = [b for b in page_blocks(PAGES["en"]) if b.kind == "not run"]
    text = "".join(b.text for b in blocks)
    mentioned = set(re.findall(r"dist/([\w.-]+\.difypkg)", text))
    unsigned = {name.replace(".signed.difypkg", ".difypkg") for name in mentioned}
    assert unsigned == built_package_names()
    signed = {name for name in mentioned if name.endswith(".signed.difypkg")}
    assert signed == {name.replace(".difypkg", ".signed.difypkg") for name in built_package_names()}

    generate = re.search(r"dify signature generate -f (\S+)", text)
    assert generate is not None
    key = generate[1]
    for name in built_package_names():
        assert f"dify signature sign dist/{name} -p {key}.private.pem -c community" in text
        signed_name = name.replace(".difypkg", ".signed.difypkg")
        assert f"dify signature verify dist/{signed_name} -p {key}.public.pem" in text
    assert f"cp {key}.public.pem volumes/plugin_daemon/public_keys/" in text

    override = next(b for b in blocks if b.lang == "yaml")
    environment = yaml.safe_load(override.text)["services"]["plugin_daemon"]["environment"]
    assert environment == {
        "FORCE_VERIFYING_SIGNATURE": "true",
        "THIRD_PARTY_SIGNATURE_VERIFICATION_ENABLED": "true",
        # volumes/plugin_daemon is /app/storage inside the container
        "THIRD_PARTY_SIGNATURE_VERIFICATION_PUBLIC_KEYS": f"/app/storage/public_keys/{key}.public.pem",
    }


# ---------------------------------------------------------------------------------------------------
# the forms the page describes are the plugins' YAML


def _table_rows(page: Path) -> dict[str, list[str]]:
    """Table rows whose first cell is a backticked name: ``{name: [the other cells]}``."""
    rows: dict[str, list[str]] = {}
    for line in page.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and re.fullmatch(r"`[a-z_]+`", cells[0]):
            rows[cells[0].strip("`")] = cells[1:]
    return rows


_REQUIRED = {"en": {True: "yes", False: "no"}, "ja": {True: "必須", False: "任意"}}


def _shown_default(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`" if value != "" else '`""`'


@pytest.mark.parametrize("lang", sorted(PAGES))
def test_the_credentials_table_is_the_provider_form(lang: str) -> None:
    provider = yaml.safe_load(
        (REPO / "app" / "openai_gpt5_responses" / "provider" / "openai_gpt5.yaml").read_text(encoding="utf-8")
    )
    fields = provider["provider_credential_schema"]["credential_form_schemas"]
    rows = _table_rows(PAGES[lang])
    for field in fields:
        label, required, default = rows[field["variable"]][:3]
        assert label == field["label"].get(lang + "_JP" if lang == "ja" else "en_US", field["label"]["en_US"])
        assert required == _REQUIRED[lang][field["required"]]
        assert default == _shown_default(field.get("default"))
    form = {field["variable"] for field in fields}
    assert {
        name
        for name in rows
        if name.startswith("openai_") or name in {"max_retries", "request_timeout_seconds"}
    } == form

    page = PAGES[lang].read_text(encoding="utf-8")
    models = yaml.safe_load(
        (REPO / "app" / "openai_gpt5_responses" / "models" / "llm" / "_position.yaml").read_text(
            encoding="utf-8"
        )
    )
    positions = [page.index(f"`{model}`") for model in models]
    assert positions == sorted(positions), "the predefined models are listed in the position file's order"


@pytest.mark.parametrize("lang", sorted(PAGES))
def test_the_parameter_table_is_the_strategies_yaml(lang: str) -> None:
    folder = REPO / "app" / "gpt5_agent_strategies" / "strategies"
    declared = [
        yaml.safe_load((folder / name).read_text(encoding="utf-8"))["parameters"]
        for name in ("gpt5_function_calling.yaml", "gpt5_react.yaml")
    ]
    assert declared[0] == declared[1], "the page describes both strategies with one table"
    rows = _table_rows(PAGES[lang])
    for parameter in declared[0]:
        label, kind, required, default = rows[parameter["name"]][:4]
        assert label == parameter["label"]["ja_JP" if lang == "ja" else "en_US"]
        assert kind == parameter["type"]
        assert required == _REQUIRED[lang][parameter["required"]]
        assert default == _shown_default(parameter.get("default"))
