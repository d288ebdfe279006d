import json
import re

import pytest

from noetic.assessment import Assessment, Phase
from noetic.assessment_prompt import build_assessment_prompt
from noetic.profiles import ProfileRegistry
from noetic.vectors import VECTOR_NAMES

from .conftest import uniform


def example_json(prompt: str) -> dict:
    return json.loads(prompt[prompt.rindex("\n{") :])


@pytest.mark.parametrize("phase", list(Phase))
def test_prompt_names_the_task_every_vector_and_the_scale(phase):
    prompt = build_assessment_prompt("migrate the billing schema", phase)
    assert "TASK: migrate the billing schema" in prompt
    for name in VECTOR_NAMES:
        assert re.search(rf"^- {name} \(", prompt, re.M), name
    assert "0.0 to 1.0" in prompt and "never 85" in prompt
    assert phase.value.upper() in prompt


def test_the_example_answer_is_accepted_by_the_assessment_parser():
    for phase in Phase:
        example = example_json(build_assessment_prompt("t", phase))
        parsed = Assessment.from_input(Phase.CHECK, example)  # two vectors: a valid partial
        assert parsed.recommended_action is not None


def test_check_allows_partial_answers_and_shows_the_previous_scores():
    previous = Assessment.from_input("preflight", uniform(0.6))
    prompt = build_assessment_prompt("t", Phase.CHECK, previous=previous)
    assert "only the vectors that changed" in prompt
    assert '"know": 0.6' in prompt


def test_profile_requirements_reach_the_prompt():
    registry = ProfileRegistry()
    critical = build_assessment_prompt("t", Phase.POSTFLIGHT, registry.get("critical_domain"))
    assert "at least 0.9" in critical and "requires evidence" in critical
    dynamic = build_assessment_prompt("t", Phase.PREFLIGHT, registry.get("exploratory"))
    assert "at least 0.5" in dynamic
    trusted = build_assessment_prompt(
        "t", Phase.PREFLIGHT, registry.get("high_reasoning_collaborative")
    )
    assert "your own judgement" in trusted
    reflective = build_assessment_prompt("t", Phase.POSTFLIGHT, registry.get("exploratory"))
    assert "what you learned" in reflective
