import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.errors import ValidationError
from noetic.vectors import (
    INVERTED,
    TIER_WEIGHTS,
    TIERS,
    UNCERTAINTY_DISCOUNT,
    VECTOR_NAMES,
    Tuning,
    check_score,
    overall_confidence,
    tier_scores,
)

from .conftest import uniform

scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
vector_sets = st.fixed_dictionaries({v: scores for v in VECTOR_NAMES})
multipliers = st.floats(min_value=0.1, max_value=3.0, allow_nan=False)
tunings = st.builds(
    Tuning,
    confidence_weight=st.floats(min_value=0.1, max_value=3.0),
    foundation_weight=multipliers,
    comprehension_weight=multipliers,
    execution_weight=multipliers,
    engagement_weight=multipliers,
    uncertainty_weight=st.floats(min_value=0.0, max_value=3.0),
)


def test_thirteen_vectors_in_four_tiers_plus_the_meta_vector():
    assert len(VECTOR_NAMES) == 13
    assert VECTOR_NAMES[-1] == "uncertainty"
    assert sum(len(v) for v in TIERS.values()) == 12
    assert TIER_WEIGHTS == {
        "engagement": 0.15,
        "foundation": 0.35,
        "comprehension": 0.25,
        "execution": 0.25,
    }
    assert math.isclose(sum(TIER_WEIGHTS.values()), 1.0)
    assert INVERTED == {"density", "uncertainty"}


def test_confidence_is_the_weighted_tier_mean_discounted_by_uncertainty():
    v = uniform(0.8, uncertainty=0.0)
    v["density"] = 0.2  # oriented 0.8
    assert overall_confidence(v) == pytest.approx(0.8)
    v["uncertainty"] = 1.0
    assert overall_confidence(v) == pytest.approx(0.8 * (1 - UNCERTAINTY_DISCOUNT))


def test_tiers_carry_their_weights():
    v = {name: 0.0 for name in VECTOR_NAMES}
    v["density"] = 1.0
    for name in TIERS["foundation"]:
        v[name] = 1.0
    assert overall_confidence(v) == pytest.approx(0.35 * (1 - 0.0))
    v = {**v, "know": 0.0, "do": 0.0, "context": 0.0, "engagement": 1.0}
    assert overall_confidence(v) == pytest.approx(0.15)


def test_density_is_load_and_enters_comprehension_inverted():
    low_load = uniform(0.7, density=0.1)
    high_load = uniform(0.7, density=0.9)
    assert tier_scores(low_load)["comprehension"] > tier_scores(high_load)["comprehension"]
    assert overall_confidence(low_load) > overall_confidence(high_load)


def test_multipliers_renormalise_and_shift_balance_only():
    v = uniform(0.6, know=1.0, do=1.0, context=1.0)
    plain = overall_confidence(v)
    heavy = overall_confidence(v, Tuning(foundation_weight=1.5))
    assert heavy > plain  # foundation is the strong tier here
    same = Tuning(
        foundation_weight=2.0, comprehension_weight=2.0, execution_weight=2.0, engagement_weight=2
    )
    assert overall_confidence(v, same) == pytest.approx(plain)


def test_uncertainty_weight_scales_the_discount_and_confidence_weight_scales_the_result():
    v = uniform(0.8, uncertainty=0.5)
    base = overall_confidence(v, Tuning(uncertainty_weight=0.0))
    assert overall_confidence(v) == pytest.approx(base * (1 - 0.25 * 0.5))
    assert overall_confidence(v, Tuning(uncertainty_weight=1.4)) == pytest.approx(
        base * (1 - 0.25 * 1.4 * 0.5)
    )
    assert overall_confidence(v, Tuning(confidence_weight=0.5)) == pytest.approx(
        0.5 * overall_confidence(v)
    )
    assert overall_confidence(uniform(1.0), Tuning(confidence_weight=3.0)) == 1.0


def test_partial_vectors_use_the_tiers_present():
    assert overall_confidence({"know": 0.9}) == pytest.approx(0.9)
    with pytest.raises(ValidationError, match="no tiered vector"):
        overall_confidence({"uncertainty": 0.2})


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("know", 1.2, "outside"),
        ("know", -0.01, "outside"),
        ("know", float("nan"), "finite"),
        ("know", float("inf"), "finite"),
        ("know", "0.5", "must be a number"),
        ("know", True, "must be a number"),
        ("know", None, "must be a number"),
        ("wisdom", 0.5, "unknown vector"),
    ],
)
def test_bad_scores_are_rejected_naming_vector_and_value(name, value, message):
    with pytest.raises(ValidationError, match=message) as info:
        check_score(name, value)
    assert info.value.field == name


@given(vector_sets, tunings)
def test_confidence_always_lands_in_unit_interval(vectors, tuning):
    c = overall_confidence(vectors, tuning)
    assert 0.0 <= c <= 1.0


@pytest.mark.slow
@given(vector_sets, st.sampled_from([v for v in VECTOR_NAMES]), scores)
def test_confidence_is_monotone_in_each_vector(vectors, name, other):
    lo, hi = sorted((vectors[name], other))
    at_lo = overall_confidence({**vectors, name: lo})
    at_hi = overall_confidence({**vectors, name: hi})
    if name in INVERTED:
        assert at_hi <= at_lo + 1e-12
    else:
        assert at_hi >= at_lo - 1e-12


# The seed's formula, offered as a profile setting ----------------------------------------------

DOCS_EXAMPLE = {**{v: 0.7 for v in VECTOR_NAMES}, "density": 0.4, "uncertainty": 0.55}
SEED_TUNING = Tuning(confidence_formula="seed")


def test_the_docs_worked_example_under_each_formula():
    assert overall_confidence(DOCS_EXAMPLE) == pytest.approx(0.598359375)
    # 0.15·0.7 + 0.35·0.7 + 0.25·(0.7·3 + 0.4)/4 + 0.25·0.7: density as written, no discount
    assert overall_confidence(DOCS_EXAMPLE, SEED_TUNING) == pytest.approx(0.68125)


@given(vector_sets)
def test_the_seed_formula_is_the_plain_weighted_sum_of_the_tier_means(vectors):
    means = {t: sum(vectors[n] for n in names) / len(names) for t, names in TIERS.items()}
    expected = sum(TIER_WEIGHTS[t] * means[t] for t in TIERS)
    assert overall_confidence(vectors, SEED_TUNING) == pytest.approx(expected)
    # uncertainty never enters it
    assert overall_confidence({**vectors, "uncertainty": 1.0}, SEED_TUNING) == pytest.approx(
        overall_confidence({**vectors, "uncertainty": 0.0}, SEED_TUNING)
    )


@given(vector_sets, tunings)
def test_the_seed_formula_stays_a_fraction_under_any_tuning(vectors, tuning):
    seeded = tuning.model_copy(update={"confidence_formula": "seed"})
    assert 0.0 <= overall_confidence(vectors, seeded) <= 1.0


def test_an_unknown_formula_is_refused_naming_the_field():
    from noetic.profiles import parse_profile

    with pytest.raises(ValidationError, match=r"tuning.confidence_formula.*'empirica'"):
        parse_profile({"name": "x", "tuning": {"confidence_formula": "empirica"}})


@pytest.mark.subprocess
def test_a_profile_choosing_the_seed_formula_proceeds_where_noetics_investigates(tmp_path):
    import json

    from typer.testing import CliRunner

    from noetic.cli import app

    runner = CliRunner()
    path = tmp_path / "seeded.yaml"
    path.write_text("name: seeded\ntuning:\n  confidence_formula: seed\n")  # balanced's 0.65
    assert runner.invoke(app, ["profile", "import", str(path)]).exit_code == 0
    decisions = {}
    for profile in ("balanced", "seeded"):
        runner.invoke(app, ["bootstrap", "--profile", profile, "--ai-id", profile])
        pre = runner.invoke(app, ["preflight", "t", "--vectors", json.dumps(DOCS_EXAMPLE),
                                  "--ai-id", profile, "--json"])  # fmt: skip
        assert pre.exit_code == 0, pre.output
        decisions[profile] = json.loads(pre.stdout)["decision"]
    assert decisions["balanced"]["action"] == "INVESTIGATE"
    assert decisions["balanced"]["confidence"] == pytest.approx(0.598, abs=1e-3)
    assert decisions["seeded"]["action"] == "PROCEED"
    assert decisions["seeded"]["confidence"] == pytest.approx(0.681, abs=1e-3)
