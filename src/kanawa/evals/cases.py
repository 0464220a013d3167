"""Datasets and cases: what an eval runs, typed with generics and stored as YAML or JSON.

A :class:`Case` is one input with (optionally) the expected output, free metadata and its own
scorers; a :class:`Dataset` is named cases plus scorers that apply to all of them. Scorers are kept
as :class:`ScorerSpec` (``{"type": "contains", "value": "x"}``) so a dataset file round-trips; Python
users may put scorer objects in the same lists (such a dataset cannot be saved to a file).

:meth:`Dataset.json_schema` gives editors (VS Code's YAML extension, JetBrains) completion and
checking for dataset files. Making datasets from recorded traces and served runs lives in
:mod:`kanawa.evals.sources`; the classmethods here are its front door.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Generic

from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema
from typing_extensions import TypeVar

from kanawa.evals.scoring import Scorer, build_scorer, scorer_types

if TYPE_CHECKING:
    from kanawa.trace.records import TraceLog

InputT = TypeVar("InputT", default=Any)
"""What a case gives the agent (a prompt string, or a mapping a task turns into one)."""
OutputT = TypeVar("OutputT", default=Any)
"""What the case expects back."""


class DatasetFileError(ValueError):
    """A dataset file could not be read: wrong suffix, bad YAML/JSON, or content that does not fit."""


class ScorerSpec(BaseModel):
    """A serialisable scorer: ``type`` names a registered scorer, the other keys are its parameters."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str = Field(description="Registered scorer type, e.g. 'contains', 'regex', 'tool_calls'.")

    @property
    def params(self) -> dict[str, Any]:
        """The scorer's parameters (every key but ``type``)."""
        return dict(self.model_extra or {})

    def build(self) -> Scorer:
        """The scorer this spec describes (``ValueError`` for an unknown type or bad parameters)."""
        return build_scorer(self.type, self.params)


_SPEC_LIST_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string"}},
        "additionalProperties": True,
    },
}

ScorerList = Annotated[list[ScorerSpec | Scorer], WithJsonSchema(_SPEC_LIST_SCHEMA)]
"""Scorer specs (serialisable) or scorer objects (Python only)."""


class Case(BaseModel, Generic[InputT, OutputT]):
    """One thing to evaluate: ``inputs`` for the agent, the ``expected_output`` (if any), metadata
    (tags, source run id …) and scorers that apply to this case only."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(min_length=1)
    inputs: InputT
    expected_output: OutputT | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    scorers: ScorerList = Field(default_factory=list)


class Dataset(BaseModel, Generic[InputT, OutputT]):
    """Named cases plus scorers for every case. Case names must be unique: reports and ``compare``
    pair runs by case name."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(min_length=1)
    cases: list[Case[InputT, OutputT]]
    scorers: ScorerList = Field(default_factory=list)
    target: str | None = Field(
        default=None,
        description="The agent this dataset runs against by default, as 'module:attribute' "
        "(used by `kanawa eval run` without --agent and by the pytest plugin).",
    )

    def model_post_init(self, context: Any, /) -> None:
        seen: set[str] = set()
        for case in self.cases:
            if case.name in seen:
                raise ValueError(f"duplicate case name {case.name!r} in dataset {self.name!r}")
            seen.add(case.name)

    # --- files -------------------------------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Dataset[Any, Any]:
        """Load a ``.yaml``/``.yml`` or ``.json`` dataset; errors name the file and the bad field."""
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise DatasetFileError(f"cannot read dataset {file}: {exc.strerror or exc}") from None
        data = _parse(text, file)
        return cls.from_dict(data, source=str(file))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "dataset") -> Dataset[Any, Any]:
        """Validate plain data (as loaded from YAML/JSON) into a dataset, with a readable error."""
        if not isinstance(data, dict):
            raise DatasetFileError(f"{source}: a dataset is a mapping with 'name' and 'cases'")
        data = {k: v for k, v in data.items() if k != "$schema"}
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
                for err in exc.errors()[:5]
            )
            raise DatasetFileError(f"{source}: {problems}") from None
        except ValueError as exc:
            raise DatasetFileError(f"{source}: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for a file; scorer objects (not specs) cannot be written and raise ``ValueError``."""
        for where, scorers in [("dataset", self.scorers)] + [
            (f"case {c.name!r}", c.scorers) for c in self.cases
        ]:
            for scorer in scorers:
                if not isinstance(scorer, ScorerSpec):
                    raise ValueError(
                        f"{where}: scorer {getattr(scorer, 'name', scorer)!r} is a Python object; "
                        "only registered scorer specs can be saved"
                    )
        data: dict[str, Any] = self.model_dump(mode="json", exclude_none=True)
        return data

    def to_file(self, path: str | os.PathLike[str]) -> Path:
        """Write the dataset as YAML or JSON (by suffix) and return the path."""
        file = Path(path)
        data = self.to_dict()
        suffix = file.suffix.lower()
        if suffix == ".json":
            text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
        elif suffix in {".yaml", ".yml"}:
            text = _yaml().safe_dump(data, allow_unicode=True, sort_keys=False)
        else:
            raise DatasetFileError(f"{file}: a dataset file ends in .yaml, .yml or .json")
        file.write_text(text, encoding="utf-8")
        return file

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The JSON Schema of a dataset file, for editors; scorer ``type`` lists the registered types."""
        schema = cls.model_json_schema()
        names = sorted(scorer_types())
        for definition in schema.get("$defs", {}).values():
            _enum_scorer_types(definition, names)
        _enum_scorer_types(schema, names)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema.setdefault("properties", {})["$schema"] = {"type": "string"}
        return schema

    # --- other sources -----------------------------------------------------------------------------

    @classmethod
    def from_traces(
        cls,
        traces: Sequence[str | os.PathLike[str] | TraceLog],
        *,
        name: str = "from-traces",
        **options: Any,
    ) -> Dataset[Any, Any]:
        """Cases from recorded ``kanawa.trace`` JSONL files, one per run. Traces keep no prompts, so
        give ``inputs={run_id: input}`` (or a function of the run); ``failed_only``, ``keep_output``,
        ``pin_trajectory`` and ``skip_missing`` are described in :mod:`kanawa.evals.sources`."""
        from kanawa.evals.sources import dataset_from_traces

        return dataset_from_traces(traces, name=name, **options)

    @classmethod
    async def afrom_served_runs(
        cls,
        base_url: str,
        run_ids: Sequence[str],
        *,
        name: str = "from-served-runs",
        headers: dict[str, str] | None = None,
        **options: Any,
    ) -> Dataset[Any, Any]:
        """Cases from a served agent's runs (``kanawa serve``), one per run id, with the same options
        as :meth:`from_traces`; the served chunks add the tool arguments and the final output."""
        from kanawa.evals.sources import adataset_from_served_runs

        return await adataset_from_served_runs(base_url, run_ids, name=name, headers=headers, **options)

    @classmethod
    def from_served_runs(
        cls,
        base_url: str,
        run_ids: Sequence[str],
        *,
        name: str = "from-served-runs",
        headers: dict[str, str] | None = None,
        **options: Any,
    ) -> Dataset[Any, Any]:
        """Sync :meth:`afrom_served_runs`."""
        from kanawa._sync import run_in_new_loop

        return run_in_new_loop(
            lambda: cls.afrom_served_runs(base_url, run_ids, name=name, headers=headers, **options),
            twin="Dataset.afrom_served_runs",
        )


def _enum_scorer_types(definition: dict[str, Any], names: list[str]) -> None:
    """Put the registered scorer names on every ``scorers`` array's ``type`` property."""
    props = definition.get("properties", {})
    scorers = props.get("scorers")
    if isinstance(scorers, dict) and scorers.get("type") == "array":
        items = dict(scorers.get("items", {}))
        item_props = dict(items.get("properties", {}))
        item_props["type"] = {"type": "string", "enum": names}
        items["properties"] = item_props
        scorers["items"] = items


def _yaml() -> Any:
    try:
        import yaml
    except ModuleNotFoundError:
        raise DatasetFileError(_no_yaml_message()) from None
    return yaml


def _no_yaml_message() -> str:
    """Which extra to install for YAML, read from the installed package's metadata (so the sentence
    stays true whichever extras list PyYAML), ``evals`` first: it is the eval harness's own."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        requirements = requires("kanawa") or []
    except PackageNotFoundError:
        requirements = []
    extras: list[str] = []
    for line in requirements:
        name, _, marker = line.partition(";")
        if name.strip().lower().startswith("pyyaml") and "extra ==" in marker:
            extra = marker.split("extra ==", 1)[1].strip().strip("'\"")
            if extra not in extras:
                extras.append(extra)
    extras.sort(key=lambda extra: (extra != "evals", extra == "all", extra))
    best = extras[0] if extras else "evals"
    also = f" (any of the extras {', '.join(extras)} includes it)" if len(extras) > 1 else ""
    return (
        f"YAML datasets need PyYAML, which is not installed: pip install 'kanawa[{best}]'{also}, "
        "or give the dataset as .json"
    )


def _parse(text: str, file: Path) -> Any:
    suffix = file.suffix.lower()
    if suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetFileError(f"{file}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if suffix in {".yaml", ".yml"}:
        yaml = _yaml()
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise DatasetFileError(f"{file}: not valid YAML ({exc})") from None
    raise DatasetFileError(f"{file}: a dataset file ends in .yaml, .yml or .json")


__all__ = ["Case", "Dataset", "DatasetFileError", "InputT", "OutputT", "ScorerList", "ScorerSpec"]
