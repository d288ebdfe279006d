"""Which dependency strings a pyproject.toml names, read from its tables whatever their shape: the
project's list, its extras', its dependency groups' (PEP 735); a table of the wrong type is read
as absent, never as an error."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from noetic.hosts.testing.detect import _dependencies


def test_the_project_its_extras_and_its_groups_are_read_in_that_order():
    pyproject = {
        "project": {
            "dependencies": ["httpx"],
            "optional-dependencies": {"test": ["pytest>=8", "pytest-cov"], "docs": ["mkdocs"]},
        },
        "dependency-groups": {"dev": ["ruff", "pytest"]},
    }
    assert _dependencies(pyproject) == [
        "httpx",
        "pytest>=8",
        "pytest-cov",
        "mkdocs",
        "ruff",
        "pytest",
    ]


def test_tables_of_the_wrong_type_and_entries_that_are_not_text_are_left_out():
    assert _dependencies({"project": ["pytest"]}) == []
    assert _dependencies({"project": {"optional-dependencies": ["pytest"]}}) == []
    assert _dependencies({"project": {"optional-dependencies": {"t": "pytest"}}}) == []
    assert _dependencies({"dependency-groups": "pytest"}) == []
    assert _dependencies({"dependency-groups": {"dev": [{"include-group": "t"}, "pytest", 3]}}) == [
        "pytest"
    ]
    assert _dependencies({"project": {"dependencies": "pytest"}}) == []


toml_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
tables = st.fixed_dictionaries(
    {},
    optional={
        "project": st.fixed_dictionaries(
            {},
            optional={
                "dependencies": toml_value,
                "optional-dependencies": toml_value
                | st.dictionaries(st.text(max_size=4), toml_value),
            },
        )
        | toml_value,
        "dependency-groups": toml_value | st.dictionaries(st.text(max_size=4), toml_value),
    },
)


def _expected(pyproject: dict[str, Any]) -> list[str]:
    project = pyproject.get("project")
    project = project if isinstance(project, dict) else {}
    found: list[str] = []
    for deps in [project.get("dependencies")]:
        found += [d for d in deps if isinstance(d, str)] if isinstance(deps, list) else []
    for table in (project.get("optional-dependencies"), pyproject.get("dependency-groups")):
        if isinstance(table, dict):
            for deps in table.values():
                found += [d for d in deps if isinstance(d, str)] if isinstance(deps, list) else []
    return found


@given(tables)
def test_any_shape_gives_exactly_the_text_entries_of_the_lists_where_they_belong(pyproject):
    assert _dependencies(pyproject) == _expected(pyproject)
