"""Build Dify plugin packages (``.difypkg``) from the plugin directories under ``app/``.

A ``.difypkg`` is a zip of the plugin directory, as Dify's own packager makes it: every file not matched
by the plugin's ``.difyignore`` (gitignore syntax), entries sorted, forward slashes, at most 50 MB
uncompressed, with a ``requirements.txt``. kanawa itself is bundled as a top-level ``kanawa/`` package
(the plugin imports it from its working directory), so the plugin installs from PyPI requirements alone,
with no access to this repository. Entries carry a fixed timestamp, so the same sources always give
the same bytes.

    python tools/difypkg.py app/openai_gpt5_responses app/gpt5_agent_strategies --out dist
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pathspec
import yaml

REPO = Path(__file__).resolve().parents[1]
KANAWA_SRC = REPO / "src" / "kanawa"
MAX_UNCOMPRESSED_BYTES = 50 * 1024 * 1024
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_ALWAYS_IGNORED = ("__pycache__/", "*.pyc", ".DS_Store")
_KANAWA_LEFT_OUT = ("apps/", "node_modules/")
"""Parts of kanawa a plugin never imports: the applications (their samples, data and Node sidecar would
only weigh the package down — a textlint install alone is tens of megabytes)."""


class PackageError(ValueError):
    """The plugin directory cannot be packaged (the message says why)."""


def _ignore_spec(plugin_dir: Path) -> pathspec.GitIgnoreSpec:
    ignore_file = plugin_dir / ".difyignore"
    lines = ignore_file.read_text(encoding="utf-8").splitlines() if ignore_file.is_file() else []
    return pathspec.GitIgnoreSpec.from_lines([*_ALWAYS_IGNORED, *lines])


def plugin_files(plugin_dir: Path) -> list[tuple[str, Path]]:
    """``(archive name, source path)`` of every file the package holds, sorted by archive name."""
    spec = _ignore_spec(plugin_dir)
    entries: dict[str, Path] = {}
    for path in plugin_dir.rglob("*"):
        if not path.is_file():
            continue
        name = path.relative_to(plugin_dir).as_posix()
        if not spec.match_file(name):
            entries[name] = path
    if (plugin_dir / "kanawa").exists():
        raise PackageError(f"{plugin_dir} has its own kanawa/ directory; kanawa is bundled by the packager")
    kanawa_spec = pathspec.GitIgnoreSpec.from_lines([*_ALWAYS_IGNORED, *_KANAWA_LEFT_OUT])
    for path in KANAWA_SRC.rglob("*"):
        inside = path.relative_to(KANAWA_SRC).as_posix()
        if path.is_file() and not kanawa_spec.match_file(inside):
            entries["kanawa/" + inside] = path
    return sorted(entries.items())


def _check(plugin_dir: Path, files: Sequence[tuple[str, Path]]) -> dict[str, object]:
    manifest_path = plugin_dir / "manifest.yaml"
    if not manifest_path.is_file():
        raise PackageError(f"{plugin_dir} has no manifest.yaml")
    manifest = yaml.safe_load(manifest_path.read_text(encoding="utf-8"))
    if not isinstance(manifest, dict) or not manifest.get("name") or not manifest.get("version"):
        raise PackageError(f"{manifest_path} needs a name and a version")
    names = {name for name, _ in files}
    if "requirements.txt" not in names:
        raise PackageError(f"{plugin_dir} has no requirements.txt (or .difyignore excludes it)")
    total = sum(path.stat().st_size for _, path in files)
    if total > MAX_UNCOMPRESSED_BYTES:
        raise PackageError(f"{plugin_dir} is {total} bytes uncompressed; Dify accepts at most 50 MB")
    return manifest


def build(plugin_dir: Path, out_dir: Path) -> Path:
    """Write ``<out_dir>/<name>-<version>.difypkg`` for ``plugin_dir`` and return its path."""
    files = plugin_files(plugin_dir)
    manifest = _check(plugin_dir, files)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{manifest['name']}-{manifest['version']}.difypkg"
    partial = target.with_suffix(".difypkg.partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, path in files:
            info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes())
    partial.replace(target)
    return target


def _iter_args(argv: Sequence[str] | None) -> Iterator[tuple[Path, Path]]:
    parser = argparse.ArgumentParser(description="Build .difypkg files from Dify plugin directories.")
    parser.add_argument("plugins", nargs="+", type=Path, help="plugin directories (with manifest.yaml)")
    parser.add_argument("--out", type=Path, default=REPO / "dist", help="output directory (default: dist)")
    args = parser.parse_args(argv)
    for plugin in args.plugins:
        yield plugin, args.out


def main(argv: Sequence[str] | None = None) -> int:
    try:
        for plugin, out in _iter_args(argv):
            target = build(plugin.resolve(), out)
            print(f"{target} ({target.stat().st_size} bytes)")
    except PackageError as exc:
        print(f"difypkg: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
