import pytest

from noetic.errors import NotFoundError, ValidationError
from noetic.profiles import (
    PostflightMode,
    ProfileRegistry,
    ToolMode,
    load_profile_file,
)


@pytest.fixture
def registry(tmp_path):
    return ProfileRegistry(tmp_path / "profiles")


def test_the_five_builtins_carry_the_seed_values(registry):
    assert registry.names() == [
        "autonomous_agent",
        "balanced",
        "critical_domain",
        "exploratory",
        "high_reasoning_collaborative",
    ]
    hr = registry.get("high_reasoning_collaborative")
    assert hr.investigation.max_rounds is None and hr.dynamic
    assert hr.investigation.tool_mode is ToolMode.LIGHT
    aa = registry.get("autonomous_agent")
    assert (aa.investigation.max_rounds, aa.investigation.confidence_threshold) == (5, 0.70)
    assert aa.investigation.tool_mode is ToolMode.GUIDED
    cd = registry.get("critical_domain")
    assert (cd.investigation.max_rounds, cd.investigation.confidence_threshold) == (3, 0.90)
    assert cd.investigation.tool_mode is ToolMode.PRESCRIBED
    assert cd.tuning.foundation_weight == 1.5 and cd.tuning.uncertainty_weight == 1.4
    assert cd.postflight_mode is PostflightMode.EVIDENCE_REQUIRED
    ex = registry.get("exploratory")
    assert ex.investigation.max_rounds is None and ex.investigation.confidence_threshold == 0.5
    assert ex.investigation.tool_mode is ToolMode.INSPIRATIONAL
    ba = registry.get("balanced")
    assert (ba.investigation.max_rounds, ba.investigation.confidence_threshold) == (7, 0.65)
    assert ba.investigation.tool_mode is ToolMode.SUGGESTIVE
    for name in registry.names():
        assert registry.get(name).philosophy


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"name": "exploratory", "ai_model": "claude-sonnet"}, "exploratory"),
        ({"ai_model": "claude-sonnet"}, "high_reasoning_collaborative"),
        ({"ai_model": "claude-3-5-haiku-latest"}, "autonomous_agent"),
        ({"ai_model": "gpt-4o-mini"}, "autonomous_agent"),
        ({"ai_model": "gpt-4o"}, "high_reasoning_collaborative"),
        ({"domain": "medical"}, "critical_domain"),
        ({"domain": "Legal"}, "critical_domain"),
        ({"domain": "research"}, "exploratory"),
        ({"ai_model": "gpt-3.5-turbo", "domain": "research"}, "autonomous_agent"),
        ({"ai_model": "unknown-model", "domain": "medical"}, "critical_domain"),
        ({"ai_model": "unknown-model", "domain": "cooking"}, "balanced"),
        ({}, "balanced"),
    ],
)
def test_selection(registry, kwargs, expected):
    assert registry.select(**kwargs).name == expected


def test_unknown_explicit_profile_lists_the_known_ones(registry):
    with pytest.raises(NotFoundError) as info:
        registry.select("paranoid")
    assert "balanced" in str(info.value) and "critical_domain" in str(info.value)


def test_user_profiles_are_selectable_by_their_declared_data(registry, tmp_path):
    registry.user_dir.mkdir(parents=True)
    (registry.user_dir / "pharma.yaml").write_text(
        "name: pharma\nselection:\n  domains: [pharmacology]\n"
        "investigation:\n  confidence_threshold: 0.95\n"
    )
    fresh = ProfileRegistry(registry.user_dir)
    assert fresh.select(domain="pharmacology").name == "pharma"
    assert fresh.get("pharma").investigation.confidence_threshold == 0.95


def test_a_broken_profile_file_is_skipped_with_a_warning_during_auto_selection(registry):
    registry.user_dir.mkdir(parents=True)
    (registry.user_dir / "broken.yaml").write_text("name: broken\ninvestigation: [unclosed\n")
    fresh = ProfileRegistry(registry.user_dir)
    with pytest.warns(UserWarning, match="skipping profile 'broken'"):
        assert fresh.select(domain="anything").name == "balanced"
    with pytest.raises(ValidationError, match="not valid YAML"):
        fresh.get("broken")


def test_a_user_balanced_that_is_broken_falls_back_to_defaults_with_a_warning(registry):
    registry.user_dir.mkdir(parents=True)
    (registry.user_dir / "balanced.yaml").write_text("name: balanced\ntuning: 3\n")
    fresh = ProfileRegistry(registry.user_dir)
    with pytest.warns(UserWarning) as caught:
        chosen = fresh.select()
    assert chosen.name == "balanced"
    assert any("could not be read" in str(w.message) for w in caught)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            "name: x\ninvestigation:\n  confidence_threshold: 1.5\n",
            "investigation.confidence_threshold",
        ),
        ("name: x\ninvestigation:\n  tool_mode: loud\n", "investigation.tool_mode"),
        ("name: x\ninvestigation:\n  max_rounds: 0\n", "investigation.max_rounds"),
        ("name: x\ntuning:\n  foundation_weight: -1\n", "tuning.foundation_weight"),
        ("name: x\nflavour: mint\n", "flavour"),
        ("name: 'has space'\n", "name"),
    ],
)
def test_validation_errors_name_the_field(tmp_path, body, field):
    path = tmp_path / "x.yaml"
    path.write_text(body)
    with pytest.raises(ValidationError) as info:
        load_profile_file(path)
    assert info.value.field == field
    assert field in str(info.value)


def test_the_safe_loader_refuses_python_objects(tmp_path):
    path = tmp_path / "evil.yaml"
    path.write_text("name: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(ValidationError, match="not valid YAML"):
        load_profile_file(path)


def test_export_then_import_under_a_new_name_round_trips(registry, tmp_path):
    exported = tmp_path / "mine.yaml"
    exported.write_text(registry.get("critical_domain").to_yaml())
    imported = registry.import_file(exported, name="strict_finance")
    assert imported.name == "strict_finance"
    assert imported.model_dump(exclude={"name"}) == registry.get("critical_domain").model_dump(
        exclude={"name"}
    )
    assert ProfileRegistry(registry.user_dir).get("strict_finance") == imported


def test_missing_profile_file(tmp_path):
    with pytest.raises(NotFoundError, match="not found"):
        load_profile_file(tmp_path / "nope.yaml")


def test_an_unchanged_profile_file_is_parsed_once_and_an_edited_one_again(tmp_path, monkeypatch):
    import os

    import yaml

    parsed = []
    real = yaml.safe_load

    def counting(text):
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(yaml, "safe_load", counting)
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\nactions:\n  clarify_below: 0.4\n")
    first = load_profile_file(path)
    assert ProfileRegistry(tmp_path).get("mine") == first  # another registry: no new parse
    assert len(parsed) == 1
    path.write_text("name: mine\nactions:\n  clarify_below: 0.3\n")
    os.utime(path, ns=(1, 1))  # a new modification time, whatever the clock's resolution
    assert load_profile_file(path).actions.clarify_below == 0.3 and len(parsed) == 2
