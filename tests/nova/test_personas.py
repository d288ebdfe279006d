"""Persona files: the seed's front matter, the built-ins, the user's overrides, broken files."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from noetic.errors import NotFoundError, ValidationError
from noetic.nova import NovaSettings, run_nova
from noetic.nova.personas import Catalogue, Pattern, parse_persona, template
from noetic.profiles import ProfileRegistry
from noetic.runtime.context import build_context
from noetic.runtime.tracker import Tracker
from noetic.store import Store

from .panel import Panel
from .test_engine import QUESTION, SEED

SEED_PERSONA = """---
role: Security Expert
short_name: security
expertise:
  - authentication & authorization
  - cryptography
  - OWASP Top 10
tools:
  - threat modeling
  - penetration testing
responsibility: Evaluate security implications
pattern: domain_expert
---

# Security Expert

You are the Security Expert, the house version.
"""


def test_the_seeds_persona_file_parses_as_written():
    persona = parse_persona(SEED_PERSONA, "security.md")
    assert persona.role == "Security Expert" and persona.pattern == Pattern.DOMAIN_EXPERT
    assert persona.expertise == ("authentication & authorization", "cryptography", "OWASP Top 10")
    assert persona.body.startswith("# Security Expert") and persona.model is None


def test_builtins_hold_the_dce_the_cae_and_eight_experts():
    catalogue = Catalogue()
    assert catalogue.coordinator.short_name == "dce" and catalogue.critic.short_name == "cae"
    experts = {p.short_name for p in catalogue.experts()}
    wanted = {
        "security",
        "performance",
        "architecture",
        "integration",
        "ux",
        "data",
        "operations",
        "legal",
    }
    assert wanted <= experts
    assert all(p.source.startswith("built-in ") for p in catalogue.personas.values())


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("# no front matter\n", "front matter"),
        ("---\nrole: [unclosed\n---\nbody\n", "front matter"),
        ("---\n- a list\n---\nbody\n", "front matter"),
        (SEED_PERSONA.replace("pattern: domain_expert", "pattern: oracle"), "pattern"),
        (SEED_PERSONA.replace("short_name: security", "short_name: Bad Name!"), "short_name"),
        (
            SEED_PERSONA.replace("responsibility: Evaluate security implications\n", ""),
            "responsibility",
        ),
        (
            SEED_PERSONA.replace("pattern: domain_expert", "pattern: domain_expert\ncolour: red"),
            "colour",
        ),
        (SEED_PERSONA.replace("  - cryptography\n", "  - ''\n"), "expertise"),
        (SEED_PERSONA.split("# Security Expert")[0], "body"),
        (
            SEED_PERSONA.replace("pattern: domain_expert", "pattern: domain_expert\nmodel: ''"),
            "model",
        ),
    ],
)
def test_a_malformed_persona_file_names_the_file_and_the_field(tmp_path, text, field):
    (tmp_path / "broken.md").write_text(text, encoding="utf-8")
    with pytest.raises(ValidationError) as err:
        Catalogue([tmp_path])
    assert err.value.field == field
    assert str(tmp_path / "broken.md") in err.value.message and field in err.value.message


def test_invalid_bytes_in_a_persona_file_are_reported_with_the_file(tmp_path):
    (tmp_path / "bad.md").write_bytes(SEED_PERSONA.encode()[:40] + b"\xff\xfe" + b"\n")
    with pytest.raises(ValidationError, match=r"bad\.md"):
        Catalogue([tmp_path])


def test_a_second_coordinator_is_refused_with_the_names(tmp_path):
    (tmp_path / "chair.md").write_text(
        SEED_PERSONA.replace("short_name: security", "short_name: chair").replace(
            "pattern: domain_expert", "pattern: coordinator"
        ),
        encoding="utf-8",
    )
    with pytest.raises(
        ValidationError, match="exactly one coordinator persona, found 2: chair, dce"
    ):
        _ = Catalogue([tmp_path]).coordinator


def test_the_stores_personas_override_builtins_and_a_directory_overrides_the_store(tmp_path):
    home = Path(os.environ["NOETIC_HOME"])
    (home / "personas").mkdir(parents=True)
    (home / "personas" / "security.md").write_text(SEED_PERSONA, encoding="utf-8")
    panel = Panel(SEED)
    store = Store(home)
    ctx = build_context("nova", tracker=Tracker(store, ProfileRegistry()), provider=panel.provider)
    asyncio.run(run_nova(ctx, QUESTION))
    assert "the house version" in panel.requests[("security", "experts", 1)][0].system

    team = tmp_path / "team"
    team.mkdir()
    (team / "sec.md").write_text(SEED_PERSONA.replace("house", "team's"), encoding="utf-8")
    catalogue = Catalogue([home / "personas", team])
    assert "the team's version" in catalogue.get("security").body
    assert catalogue.overridden["security"] == str(home / "personas" / "security.md")
    with pytest.raises(NotFoundError, match="known personas: architecture"):
        catalogue.get("astrologer")


def test_a_users_new_expert_can_be_picked_by_the_dce(tmp_path):
    (tmp_path / "privacy.md").write_text(template("privacy"), encoding="utf-8")
    from .panel import said

    unpack = said(
        "Framing.",
        know=0.4,
        uncertainty=0.7,
        experts=[{"name": "privacy", "reason": "personal data in tokens"}],
    )
    panel = Panel(
        {
            **SEED,
            ("dce", "unpack"): unpack,
            ("privacy", "experts"): said("Minimise claims.", know=0.6, uncertainty=0.3),
        }
    )
    store = Store(Path(os.environ["NOETIC_HOME"]))
    ctx = build_context("nova", tracker=Tracker(store, ProfileRegistry()), provider=panel.provider)
    run = asyncio.run(run_nova(ctx, QUESTION, settings=NovaSettings(personas=(str(tmp_path),))))
    assert [p.name for p in run.experts] == ["privacy"] and run.status == "completed"
    assert "- privacy: Privacy Expert" in panel.prompt("dce", "unpack", 0)


def test_template_names_must_be_plain():
    with pytest.raises(ValidationError, match="lowercase"):
        template("../etc")
    assert parse_persona(template("billing"), "billing.md").short_name == "billing"
