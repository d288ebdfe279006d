"""Plain data checked by its annotations (noetic.plain): what is refused, how it is named, and
that a dump is read back as the same value."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.assessment import Decision
from noetic.errors import ValidationError
from noetic.events import PAYLOADS, EventKind
from noetic.plain import Value, field, field_names
from noetic.profiles import Profile, parse_profile
from noetic.vectors import Tuning

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
WEIGHTS = [f"{t}_weight" for t in ("confidence", "engagement", "foundation", "comprehension",
                                   "execution", "uncertainty")]  # fmt: skip


@given(st.sampled_from(WEIGHTS), json_values)
def test_a_weight_is_a_number_within_its_bounds_or_refused_naming_it(name, value):
    low_open = name != "uncertainty_weight"
    number = isinstance(value, int | float) and not isinstance(value, bool)
    fits = number and (value > 0 if low_open else value >= 0) and value <= 3
    try:
        tuning = Tuning(**{name: value})
    except ValidationError as exc:
        assert not fits
        assert exc.field == name and f"field {name!r}" in str(exc)
    else:
        assert fits and getattr(tuning, name) == float(value)
        assert type(getattr(tuning, name)) is float


@given(st.dictionaries(st.sampled_from(["max_rounds", "confidence_threshold", "gap_threshold",
                                        "tool_mode", "approved_tools", "bogus"]),
                       json_values, max_size=3))  # fmt: skip
def test_a_profile_section_is_read_or_refused_naming_the_dotted_field(section):
    try:
        profile = parse_profile({"name": "p", "investigation": section}, source="p.yaml")
    except ValidationError as exc:
        assert exc.field is not None and exc.field.split(".")[0] == "investigation"
        assert str(exc).startswith(f"p.yaml: field {exc.field!r}: ")
        assert exc.field.split(".")[1] in section
    else:
        inv = profile.investigation
        assert inv.max_rounds is None or 1 <= inv.max_rounds <= 1000
        assert inv.confidence_threshold == "dynamic" or 0 <= inv.confidence_threshold <= 1
        assert 0 <= inv.gap_threshold <= 1
        assert all(isinstance(t, str) for t in inv.approved_tools)


profiles = st.builds(
    lambda name, rounds, threshold, weight, models: {
        "name": name,
        "investigation": {"max_rounds": rounds, "confidence_threshold": threshold},
        "tuning": {"confidence_weight": weight},
        "selection": {"ai_models": models},
    },
    st.from_regex(r"[A-Za-z0-9_.-]{1,12}", fullmatch=True),
    st.none() | st.integers(1, 1000),
    st.just("dynamic") | st.floats(0, 1),
    st.floats(0.01, 3),
    st.lists(st.text(max_size=6), max_size=3),
)


@given(profiles)
def test_a_profiles_json_dump_reads_back_as_the_same_profile(data):
    profile = parse_profile(data)
    dumped = json.loads(json.dumps(profile.model_dump(mode="json")))
    assert Profile.model_validate(dumped) == profile
    assert profile.model_copy(update={}) == profile


@pytest.mark.parametrize(
    ("data", "field", "problem"),
    [
        ({"name": "x", "investigation": {"max_rounds": 0}}, "investigation.max_rounds",
         "must be at least 1 (got 0)"),
        ({"name": "x", "investigation": {"max_rounds": True}}, "investigation.max_rounds",
         "must be a whole number (got True)"),
        ({"name": "x", "tuning": {"foundation_weight": "1"}}, "tuning.foundation_weight",
         "must be a number (got '1')"),
        ({"name": "x", "tuning": {"confidence_weight": 0}}, "tuning.confidence_weight",
         "must be above 0 (got 0)"),
        ({"name": "x", "selection": {"domains": "web"}}, "selection.domains",
         "must be a list (got 'web')"),
        ({"name": "x", "selection": {"domains": ["web", 3]}}, "selection.domains.1",
         "must be text (got 3)"),
        ({"name": "x", "guardian": {"auto_apply": "yes"}}, "guardian.auto_apply",
         "must be true or false (got 'yes')"),
        ({"name": "x", "calibration": {"decide_on": "both"}}, "calibration.decide_on",
         "must be one of: 'calibrated', 'stated' (got 'both')"),
        ({"name": "x", "actions": []}, "actions", "must be an object of ActionThresholds"),
        ({"name": "a b"}, "name", "must match the pattern '^[A-Za-z0-9_.-]+$'"),
        ({"description": "no name"}, "name", "field required"),
    ],
)  # fmt: skip
def test_each_kind_of_wrong_value_is_named(data, field, problem):
    with pytest.raises(ValidationError) as info:
        parse_profile(data, source="mine.yaml")
    assert info.value.field == field
    assert str(info.value).startswith(f"mine.yaml: field {field!r}: {problem}")


@given(st.sampled_from(list(EventKind)), st.dictionaries(st.text(max_size=8), json_values,
                                                           max_size=4))  # fmt: skip
def test_a_payload_from_arbitrary_data_is_built_or_refused_with_a_named_field(kind, data):
    model = PAYLOADS[kind]
    try:
        payload = model.model_validate(data)
    except ValidationError as exc:
        assert exc.field is not None and str(exc).startswith(f"field {exc.field!r}: ")
        assert exc.field in data or exc.field.split(".")[0] in field_names(model)
    else:
        assert set(data) <= set(payload.model_dump())
        assert model.model_validate(payload.model_dump(mode="json")) == payload


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        (EventKind.PHASE_COMPLETED, {"phase": "CHECK", "ms": 1.5}),
        (EventKind.PHASE_COMPLETED, {"phase": "TEST", "stage": 2, "role": "judge", "ms": 2}),
        (EventKind.DECISION, {"action": "PROCEED"}),
        (
            EventKind.ASSESSMENT_RECORDED,
            {
                "phase": "preflight",
                "seq": 1,
                "confidence": 0.7,
                "missing": ["know"],
                "p_success": 0.8,
            },
        ),
        (EventKind.RUN_FINISHED, {"status": "completed", "summary": {"classification": "good"}}),
        (
            EventKind.LLM_CALL,
            {
                "provider": "openai",
                "model": "m",
                "attempt": 1,
                "outcome": "ok",
                "tokens_in": 3,
                "tokens_out": 4,
                "latency_ms": 1.0,
            },
        ),
    ],
)
def test_a_trusted_value_is_the_checked_one_its_fields_make(kind, data):
    """``trusted`` builds, without the checks, what construction builds from values that pass
    them: the same value, defaults and factories filled, its dump the same; an unknown or a
    missing field is refused as construction refuses it."""
    model = PAYLOADS[kind]
    payload = model.model_validate(data)
    fields = {name: getattr(payload, name) for name in data}
    trusted = model.trusted(**fields)
    assert trusted == payload and type(trusted) is model
    assert trusted.model_dump(mode="json") == payload.model_dump(mode="json")
    with pytest.raises(TypeError, match="has no field 'no_such_field'"):
        model.trusted(**fields, no_such_field=1)
    for name in fields:
        rest = {k: v for k, v in fields.items() if k != name}
        try:
            model(**rest)
        except TypeError:
            with pytest.raises(TypeError, match=f"needs the field {name!r}"):
                model.trusted(**rest)


def test_a_decision_leaves_out_an_empty_calibrated_and_pydantic_reads_it_the_same():
    from pydantic import BaseModel

    decision = Decision(action="PROCEED", confidence=0.8, threshold=0.7, rule="threshold",
                        reason="r", gaps=("know",))  # fmt: skip
    assert "calibrated" not in decision.model_dump(mode="json")
    assert decision.model_dump(mode="json")["gaps"] == ["know"]
    assert decision.model_dump()["gaps"] == ("know",)

    class Holder(BaseModel):
        decision: Decision

    held = Holder(decision=decision)
    assert held.model_dump(mode="json")["decision"] == decision.model_dump(mode="json")
    assert Holder.model_validate(held.model_dump(mode="json")).decision == decision
    schema = Holder.model_json_schema()["$defs"]["Decision"]
    assert schema["required"] == ["action", "confidence", "threshold", "rule", "reason", "gaps"]


def test_the_json_schema_says_what_the_checks_hold():
    from pydantic import TypeAdapter

    schema = TypeAdapter(Profile).json_schema()
    assert schema["additionalProperties"] is False
    assert schema["properties"]["name"]["pattern"] == "^[A-Za-z0-9_.-]+$"
    rounds = schema["$defs"]["Investigation"]["properties"]["max_rounds"]["anyOf"][0]
    assert (rounds["minimum"], rounds["maximum"]) == (1, 1000)
    weight = schema["$defs"]["Tuning"]["properties"]["confidence_weight"]
    assert (weight["exclusiveMinimum"], weight["maximum"]) == (0, 3)
    assert not math.isnan(TypeAdapter(Tuning).validate_python({}).confidence_weight)


def test_nan_is_outside_every_bound() -> None:
    for value in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValidationError, match="confidence_weight"):
            Tuning(confidence_weight=value)
    values: dict[str, Any] = {"gap_threshold": math.nan}
    with pytest.raises(ValidationError, match=r"investigation\.gap_threshold"):
        parse_profile({"name": "x", "investigation": values})


def test_a_class_pydantic_has_read_is_built_as_before():
    from pydantic import BaseModel

    from noetic.events import Event

    class Holder(BaseModel):
        event: Event

    Holder.model_json_schema()  # Event is a standard dataclass from now on
    event = Event(kind=EventKind.RUN_FINISHED)
    assert event.data == {} and event.at.tzinfo is not None
    assert Holder(event=event).event is event


# Value: a frozen dataclass's behaviour without the compile -----------------------------------


class Point(Value):
    x: int
    y: float = 0.5
    tags: tuple[str, ...] = ()
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    inner: Any = None


@dataclasses.dataclass(frozen=True)
class PointDC:
    x: int
    y: float = 0.5
    tags: tuple[str, ...] = ()
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    inner: Any = None


class Keyed(Value, kw_only=True):
    a: int
    b: str = "b"
    c: int


simple = st.integers() | st.floats(allow_nan=False) | st.text(max_size=4) | st.none()
point_fields = st.fixed_dictionaries(
    {"x": st.integers()},
    optional={"y": st.floats(allow_nan=False), "tags": st.tuples(st.text(max_size=3)),
              "extra": st.dictionaries(st.text(max_size=3), simple, max_size=3),
              "inner": simple | st.lists(simple, max_size=3)},
)  # fmt: skip


@given(point_fields, st.integers(0, 5), point_fields)
def test_a_value_is_built_compared_copied_and_dumped_as_the_frozen_dataclass(fields, n, other):
    names = ["x", "y", "tags", "extra", "inner"]
    given_names = [name for name in names if name in fields]
    # positionally up to the first field not given, the rest by keyword, as a dataclass takes
    cut = next((i for i, name in enumerate(names) if name not in fields), len(names))
    cut = min(cut, n)
    args = [fields[name] for name in names[:cut]]
    kwargs = {name: fields[name] for name in given_names if names.index(name) >= cut}
    value, reference = Point(*args, **kwargs), PointDC(*args, **kwargs)
    assert [getattr(value, name) for name in names] == [getattr(reference, n) for n in names]
    assert repr(value) == repr(reference).replace("PointDC", "Point", 1)
    assert value.as_dict() == dataclasses.asdict(reference)
    changed = {k: v for k, v in other.items() if k != "x"}
    assert value.replaced(**changed).as_dict() == dataclasses.asdict(
        dataclasses.replace(reference, **changed)
    )
    twin, twin_reference = Point(**other), PointDC(**other)
    assert (value == twin) == (reference == twin_reference)
    try:
        expected: int | type[TypeError] = hash(reference)
    except TypeError:
        expected = TypeError
    try:
        assert hash(value) == expected
    except TypeError:
        assert expected is TypeError
    assert value != reference and Point(x=1).extra is not Point(x=1).extra


def test_a_value_is_frozen_and_refuses_what_a_dataclass_refuses():
    point = Point(x=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.y
    with pytest.raises(TypeError, match="needs the field 'x'"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="no field 'z'"):
        Point(x=1, z=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="'x' twice"):
        Point(1, x=2)
    with pytest.raises(TypeError, match="takes 5 fields"):
        Point(1, 2.0, (), {}, None, 6)  # type: ignore[call-arg]
    # a keyword-only value (a store record) takes no positional field, and its fields may
    # follow one with a default
    assert Keyed(a=1, c=3) == Keyed(c=3, a=1, b="b")
    with pytest.raises(TypeError, match="by keyword"):
        Keyed(1, "b", 3)


def test_pydantic_reads_a_value_as_the_dataclass_it_was():
    from pydantic import TypeAdapter

    from noetic.store.records import SessionRecord

    row = {"id": "s_1", "ai_id": "agent", "profile": "balanced", "created_at": "now"}
    record = SessionRecord.model_validate(row)
    assert record == SessionRecord(**row) and record.status == "active"
    assert TypeAdapter(SessionRecord).dump_python(record) == record.model_dump()
    with pytest.raises(Exception, match="ai_id"):
        SessionRecord.model_validate({**row, "ai_id": 3})
    assert dataclasses.is_dataclass(SessionRecord)
    assert TypeAdapter(Keyed).validate_python({"a": 1, "c": 2}) == Keyed(a=1, c=2)


class Bag(Value):
    name: str
    items: list[int] = field(default_factory=list)


def test_a_plain_field_factory_makes_a_fresh_default_and_survives_pydantic():
    from pydantic import TypeAdapter

    first, second = Bag(name="a"), Bag(name="a")
    assert first.items == [] and first.items is not second.items and first == second
    # pydantic reads the class as the dataclass it becomes, with the same default factory
    made = TypeAdapter(Bag).validate_python({"name": "b"})
    assert made == Bag(name="b") and made.items == []
    assert [f.name for f in dataclasses.fields(Bag)] == ["name", "items"]
    assert Bag(name="c").items == []


# A module as the hooks and workflow commands load them: typing's names imported for the type
# checker only, an alias a field check reads written as text, a pydantic model elsewhere naming it
_LIGHT = """
from __future__ import annotations

from noetic.plain import Plain, Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar, Literal, TypeAlias

Mood: TypeAlias = 'Literal["calm", "busy"]'


class Reading(Plain):
    mood: Mood
    note: Any = None
    limit: ClassVar[int] = 3


class Pair(Value):
    mood: Mood | None
    count: int = 0
"""
_MODEL = """
from __future__ import annotations

from noetic.frozen import Frozen
from {light} import Mood, Reading


class Report(Frozen):
    mood: Mood | None
    reading: Reading
"""


def _module(name: str, text: str, folder: Any, monkeypatch: Any) -> Any:
    import importlib.util
    import sys

    (folder / f"{name}.py").write_text(text)
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def test_an_alias_written_as_text_is_checked_and_pydantic_reads_typing_names_it_was_not_given(
    tmp_path, monkeypatch
):
    from pydantic import TypeAdapter

    light = _module("noetic_light_module", _LIGHT, tmp_path, monkeypatch)
    assert "Literal" not in vars(light) and isinstance(light.Mood, str)
    # the field check reads the text: a value outside it is refused, naming what is allowed
    with pytest.raises(ValidationError, match="field 'mood': must be one of: 'calm', 'busy'"):
        light.Reading(mood="angry")
    assert light.Reading(mood="calm").mood == "calm"
    # a pydantic model in another module that imports the alias as text reads it as its type
    model = _module("noetic_light_model", _MODEL.format(light="noetic_light_module"), tmp_path,
                    monkeypatch)  # fmt: skip
    report = model.Report(mood="busy", reading={"mood": "calm"})
    assert report.reading == light.Reading(mood="calm")
    with pytest.raises(Exception, match="'calm' or 'busy'"):
        model.Report(mood="angry", reading={"mood": "calm"})
    # pydantic evaluates the annotations in the module: it is given the names first
    schema = TypeAdapter(light.Reading).json_schema()
    assert schema["properties"]["mood"]["enum"] == ["calm", "busy"]
    assert "limit" not in schema["properties"]  # a ClassVar, not a field
    assert TypeAdapter(light.Pair).validate_python({"mood": "busy"}) == light.Pair("busy")
    with pytest.raises(Exception, match="'calm' or 'busy'"):
        TypeAdapter(light.Pair).validate_python({"mood": "angry"})
    # the alias is now the type it names: the checks read it the same
    assert not isinstance(light.Mood, str)
    with pytest.raises(ValidationError, match="field 'mood': must be one of: 'calm', 'busy'"):
        light.Reading(mood="angry")


def test_the_aliases_of_calibration_results_are_checked():
    from noetic.calibration.metrics import CalibrationTest
    from noetic.calibration.per_phase import PhasePoint

    with pytest.raises(ValidationError, match="field 'verdict': must be one of"):
        CalibrationTest(verdict="fine", alpha=0.05, n=1, reason="r")
    with pytest.raises(ValidationError, match="field 'basis': must be one of"):
        PhasePoint(cascade_id="c", at="now", phase="check", stated=0.5, basis="guess",
                   observed=1.0, agent="a", model="m", engine="e", persona="p",
                   profile="balanced")  # fmt: skip
