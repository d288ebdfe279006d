"""Investigation profiles: context-specific thresholds, limits, tool modes and tuning.

The five built-ins live as YAML beside this file; users add their own in a directory
(``<store>/profiles`` by default). Selection uses only what the profiles declare, never code: an
explicit name, else the longest ``selection.ai_models`` glob matching the AI model, else
``selection.domains``, else ``balanced`` (``docs/profiles.md``). A profile file that cannot be
read is skipped during auto-selection with a warning; asked for by name, it is an error that
names the file and the field.
"""

from __future__ import annotations

import fnmatch
import os
import warnings
from enum import StrEnum
from pathlib import Path

from noetic.assessment import Assessment, Review, Thresholds
from noetic.errors import InvalidValueError, NotFoundError
from noetic.plain import Plain, refuse
from noetic.vectors import Tuning

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar, Final, Literal


DEFAULT_PROFILE: Final = "balanced"


class ToolMode(StrEnum):
    LIGHT = "light"
    SUGGESTIVE = "suggestive"
    GUIDED = "guided"
    PRESCRIBED = "prescribed"
    INSPIRATIONAL = "inspirational"


class PostflightMode(StrEnum):
    """How POSTFLIGHT is judged: all 13 vectors (``full``), all 13 each with evidence
    (``evidence_required``), or all 13 plus a note on what was learned (``reflective``)."""

    FULL = "full"
    EVIDENCE_REQUIRED = "evidence_required"
    REFLECTIVE = "reflective"


class Selection(Plain):
    ai_models: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    _closed: ClassVar = True


class Investigation(Plain):
    max_rounds: int | None = 7
    confidence_threshold: float | Literal["dynamic"] = 0.65
    dynamic_fallback_threshold: float = 0.70
    gap_threshold: float = 0.60
    tool_mode: ToolMode = ToolMode.SUGGESTIVE
    approved_tools: tuple[str, ...] = ()
    _bounds: ClassVar = {
        "max_rounds": (1, 1000, False),
        "dynamic_fallback_threshold": (0, 1, False),
        "gap_threshold": (0, 1, False),
    }
    _custom: ClassVar = {"confidence_threshold": lambda value, name: _threshold(value, name)}
    _closed: ClassVar = True


class ActionThresholds(Plain):
    clarify_below: float = 0.50
    delegate_below: float = 0.35
    _bounds: ClassVar = {"clarify_below": (0, 1, False), "delegate_below": (0, 1, False)}
    _closed: ClassVar = True


class GuardianSettings(Plain):
    """Whether the Bayesian guardian may apply its corrections to this profile by itself."""

    auto_apply: bool = False
    _closed: ClassVar = True


class CalibrationSettings(Plain):
    """What decisions compare with the threshold: the calibrated value of the agent's statement
    when a recalibration map is in force (``calibrated``, the default), or the statement as the
    agent made it (``stated``)."""

    decide_on: Literal["calibrated", "stated"] = "calibrated"
    _closed: ClassVar = True


def _threshold(value: Any, name: str) -> float | str:
    if value == "dynamic":
        return "dynamic"
    if isinstance(value, bool | str) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise refuse(name, "must be 'dynamic' or a number in [0, 1]", value)
    return float(value)


class Profile(Plain):
    name: str
    description: str = ""
    philosophy: str = ""
    selection: Selection = Selection()
    investigation: Investigation = Investigation()
    actions: ActionThresholds = ActionThresholds()
    postflight_mode: PostflightMode = PostflightMode.FULL
    # How an engine (CASCADE, the agent, Nova) asks its model for the POSTFLIGHT: a standard
    # reassessment, or an adversarial review that looks for what is wrong with the work first.
    postflight_review: Review = Review.STANDARD
    tuning: Tuning = Tuning()
    guardian: GuardianSettings = GuardianSettings()
    calibration: CalibrationSettings = CalibrationSettings()
    _patterns: ClassVar = {"name": r"^[A-Za-z0-9_.-]+$"}
    _closed: ClassVar = True

    @property
    def dynamic(self) -> bool:
        return self.investigation.confidence_threshold == "dynamic"

    @property
    def thresholds(self) -> Thresholds:
        ct = self.investigation.confidence_threshold
        return Thresholds(
            confidence_threshold=None if ct == "dynamic" else float(ct),
            dynamic_fallback_threshold=self.investigation.dynamic_fallback_threshold,
            gap_threshold=self.investigation.gap_threshold,
            clarify_below=self.actions.clarify_below,
            delegate_below=self.actions.delegate_below,
        )

    def to_yaml(self) -> str:
        import yaml

        text: str = yaml.safe_dump(
            self.model_dump(mode="json"), sort_keys=False, allow_unicode=True
        )
        return text


def with_overrides(profile: Profile, overrides: dict[str, float]) -> Profile:
    """The profile with dotted-field overrides applied (``{"tuning.confidence_weight": 0.8}``),
    validated like any profile."""
    if not overrides:
        return profile
    data = profile.model_dump(mode="json")
    for dotted, value in overrides.items():
        section, _, field = dotted.partition(".")
        if section not in data or not isinstance(data[section], dict) or field not in data[section]:
            raise InvalidValueError(f"unknown profile field {dotted!r}", field=dotted, value=value)
        data[section][field] = value
    return parse_profile(data, source=f"profile {profile.name} with adjustments")


def parse_profile(data: Any, *, source: str = "<data>") -> Profile:
    """Validate profile data; an error names the source, the field and the value."""
    if not isinstance(data, dict):
        raise InvalidValueError(
            f"{source}: a profile must be a YAML mapping, got {type(data).__name__}",
            field="profile",
            value=data,
        )
    try:
        return Profile.model_validate(data)
    except InvalidValueError as exc:
        raise InvalidValueError(
            f"{source}: {exc.message}", field=exc.field, value=exc.value, fix=exc.fix
        ) from None


_LOADED: dict[tuple[str, int, int], Profile] = {}


def load_profile_file(path: Path) -> Profile:
    """Read one profile YAML with the safe loader. A file read before and unchanged since
    (its size and modification time) is not parsed again: every registry shares the result
    (a profile is frozen), so code that opens a registry per call (recording an outcome) does
    not pay YAML's parser each time."""
    try:
        info = os.stat(path)
    except OSError:
        key = None  # read it below, which says what is wrong
    else:
        key = (os.path.realpath(path), info.st_mtime_ns, info.st_size)
        if key in _LOADED:
            return _LOADED[key]
    profile = _load_profile_file(path)
    if key is not None:
        if len(_LOADED) >= 256:
            _LOADED.clear()
        _LOADED[key] = profile
    return profile


def _load_profile_file(path: Path) -> Profile:
    from noetic import cached
    from noetic.untrusted import decode_utf8, read_file_bytes

    source = f"the profile file {path}"
    raw = read_file_bytes(path, source)
    text = decode_utf8(raw, source)
    # parsed once per content: YAML's reader costs more than a workflow command's own work
    data = cached.load("profile-yaml", [raw], lambda: _yaml(text, path))
    return parse_profile(data, source=str(path))


def _yaml(text: str, path: Path) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InvalidValueError(f"{path}: not valid YAML: {exc}", field="profile") from None


def _builtin_files() -> list[Path]:
    # beside this file (importlib.resources would cost a workflow command more than its work)
    return sorted((Path(__file__).parent / "builtin").glob("*.yaml"))


class ProfileRegistry:
    """The built-in profiles plus the user's (user profiles override built-ins of the same name)."""

    def __init__(self, user_dir: Path | None = None) -> None:
        self.user_dir = Path(user_dir) if user_dir else None
        self._files: dict[str, Path] = {p.stem: p for p in _builtin_files()}
        if self.user_dir and self.user_dir.is_dir():
            self._files.update({p.stem: p for p in sorted(self.user_dir.glob("*.yaml"))})
        self._cache: dict[str, Profile] = {}

    def names(self) -> list[str]:
        return sorted(self._files)

    def is_builtin(self, name: str) -> bool:
        return self._files.get(name, Path()).parent.name == "builtin"

    def get(self, name: str) -> Profile:
        """A profile by name; unknown names are an error listing the known ones."""
        if name not in self._files:
            raise NotFoundError(
                f"unknown profile {name!r}",
                fix=f"known profiles: {', '.join(self.names())}",
            )
        if name not in self._cache:
            profile = load_profile_file(self._files[name])
            if profile.name != name:
                raise InvalidValueError(
                    f"{self._files[name]}: field 'name' is {profile.name!r} but the file is "
                    f"{name}.yaml",
                    field="name",
                    value=profile.name,
                )
            self._cache[name] = profile
        return self._cache[name]

    def _readable(self) -> list[Profile]:
        found = []
        for name in self.names():
            try:
                found.append(self.get(name))
            except (InvalidValueError, NotFoundError) as exc:
                warnings.warn(f"skipping profile {name!r}: {exc}", UserWarning, stacklevel=3)
        return found

    def select(
        self,
        name: str | None = None,
        *,
        ai_model: str | None = None,
        domain: str | None = None,
    ) -> Profile:
        """Pick a profile: explicit name, else AI model, else domain, else ``balanced``."""
        if name:
            return self.get(name)
        candidates = self._readable()
        if ai_model:
            matched = [
                (len(pattern), profile)
                for profile in candidates
                for pattern in profile.selection.ai_models
                if fnmatch.fnmatchcase(ai_model.lower(), pattern.lower())
            ]
            if matched:  # the longest pattern; the first of equals
                return max(matched, key=lambda found: found[0])[1]
        if domain:
            wanted = domain.strip().lower()
            for profile in candidates:
                if wanted in (d.lower() for d in profile.selection.domains):
                    return profile
        for profile in candidates:
            if profile.name == DEFAULT_PROFILE:
                return profile
        warnings.warn(
            f"profile {DEFAULT_PROFILE!r} could not be read; using built-in defaults",
            UserWarning,
            stacklevel=2,
        )
        return Profile(name=DEFAULT_PROFILE)

    def import_file(self, path: Path, name: str | None = None) -> Profile:
        """Validate a YAML profile and save it to the user directory (optionally renamed)."""
        if self.user_dir is None:
            raise InvalidValueError("no user profile directory is configured", field="user_dir")
        profile = load_profile_file(Path(path))
        if name:
            profile = parse_profile({**profile.model_dump(mode="json"), "name": name})
        self.user_dir.mkdir(parents=True, exist_ok=True)
        target = self.user_dir / f"{profile.name}.yaml"
        tmp = target.with_suffix(".yaml.tmp")
        tmp.write_text(profile.to_yaml(), encoding="utf-8")
        tmp.replace(target)
        self._files[profile.name] = target
        self._cache.pop(profile.name, None)
        return profile


__all__ = [
    "DEFAULT_PROFILE",
    "PostflightMode",
    "Profile",
    "ProfileRegistry",
    "ToolMode",
    "load_profile_file",
    "parse_profile",
    "with_overrides",
]


def check_postflight_mode(assessment: Assessment, profile: Profile) -> None:
    """Raise unless the POSTFLIGHT meets the profile's ``postflight_mode`` (evidence for every
    vector, or a note on what was learned); an engine asking a model checks the reply with it,
    so a reply short of it gets the repair round rather than failing the record."""
    mode = profile.postflight_mode
    if mode == PostflightMode.EVIDENCE_REQUIRED:
        bare = [v for v in assessment.vectors if not assessment.evidence.get(v, "").strip()]
        if bare:
            raise InvalidValueError(
                f"profile {profile.name!r} requires evidence for every POSTFLIGHT vector; "
                f"missing for: {', '.join(bare)}",
                field="evidence",
                value=bare,
            )
    elif mode == PostflightMode.REFLECTIVE and not assessment.note.strip():
        raise InvalidValueError(
            f"profile {profile.name!r} asks for a note on what was learned at POSTFLIGHT",
            field="note",
            value="",
            fix='add "note": "what I learned" to the assessment',
        )
