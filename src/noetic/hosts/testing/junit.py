"""Test results from a JUnit XML report (pytest ``--junitxml``, jest-junit, most CI tools).

The report is read under the file-size limit, refused when it declares a DTD or entities
(a test report never needs one, and they are how XML files attack their readers), and parsed
with ``junitparser``. The declarations are looked for by the XML parser itself (expat, which
``junitparser`` uses too), so a report in UTF-16 or any other encoding the parser reads is
screened as it will be parsed — a search of the raw bytes would miss ``<!ENTITY`` in UTF-16.

A report whose every test passed (and at least one ran) is a success; any failure or error is a
failure; skipped tests count for neither.
"""

from __future__ import annotations

import re
from pathlib import Path

from noetic.errors import InvalidValueError
from noetic.frozen import Frozen

_DECLARATION = re.compile(rb"<!(DOCTYPE|ENTITY)", re.IGNORECASE)


class _Declared(Exception):
    """Raised from the parser's handlers at the first DTD or entity declaration."""


def _declares_entities(data: bytes) -> bool:
    """Whether the document declares a DTD or an entity, as expat reads it (any encoding);
    malformed XML raises the parser's error (``xml.parsers.expat.ExpatError``)."""
    from xml.parsers import expat

    if _DECLARATION.search(data):  # the common ASCII-compatible case, without parsing
        return True
    parser = expat.ParserCreate()

    def refuse(*_: object) -> None:
        raise _Declared

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    try:
        parser.Parse(data, True)
    except _Declared:
        return True
    return False


NAMED = 5  # failing tests named in the evidence


class JUnitSummary(Frozen):
    file: str
    tests: int
    passed: int
    failed: int
    errored: int
    skipped: int
    failing: list[str]

    @property
    def ran(self) -> int:
        return self.tests - self.skipped

    @property
    def success(self) -> bool:
        return self.failed == 0 and self.errored == 0

    def evidence(self) -> str:
        line = (
            f"JUnit {Path(self.file).name}: {self.passed} passed, {self.failed} failed, "
            f"{self.errored} errored, {self.skipped} skipped"
        )
        if self.failing:
            more = len(self.failing) - NAMED
            line += "; failing: " + ", ".join(self.failing[:NAMED])
            if more > 0:
                line += f" and {more} more"
        return line


def read_junit(data: bytes, source: str) -> JUnitSummary:
    """Count the report's test cases; a file that is not a JUnit report is a
    :class:`InvalidValueError` naming the file and, for bad XML, the line."""
    from xml.etree.ElementTree import ParseError
    from xml.parsers.expat import ExpatError

    from junitparser import JUnitXml, JUnitXmlError

    try:
        if _declares_entities(data):
            raise InvalidValueError(
                f"{source}: declares a DTD or entities, which a JUnit report never needs; not read",
                field=source,
            )
        report = JUnitXml.fromstring(data)
    except (ExpatError, ParseError) as exc:
        expat = isinstance(exc, ExpatError)
        line, column = (exc.lineno, exc.offset) if expat else getattr(exc, "position", (0, 0))
        raise InvalidValueError(
            f"{source}:{line}:{column}: not well-formed XML ({exc})", field=source
        ) from None
    except (ValueError, LookupError) as exc:  # an unknown encoding, bytes it cannot decode
        raise InvalidValueError(f"{source}: cannot be read as XML ({exc})", field=source) from None
    except JUnitXmlError:
        raise InvalidValueError(
            f"{source}: not a JUnit report (the root element is neither <testsuites> nor "
            "<testsuite>)",
            field=source,
        ) from None
    passed = failed = errored = skipped = 0
    failing: list[str] = []
    for suite in report:
        for case in suite:
            if case.is_error:
                errored += 1
            elif case.is_failure:
                failed += 1
            elif case.is_skipped:
                skipped += 1
                continue
            else:
                passed += 1
                continue
            name = ".".join(p for p in (case.classname, case.name) if p)
            failing.append(name or "(unnamed test)")
    total = passed + failed + errored + skipped
    return JUnitSummary(
        file=source,
        tests=total,
        passed=passed,
        failed=failed,
        errored=errored,
        skipped=skipped,
        failing=failing,
    )


def junit_outcome(path: Path) -> tuple[float, str]:
    """The outcome a JUnit report gives (1.0 every test passed, 0.0 one failed or errored)
    and its evidence; a report in which no test ran is refused."""
    from noetic.untrusted import read_file_bytes

    data = read_file_bytes(path, f"the JUnit report {path}")
    summary = read_junit(data, str(path))
    if summary.ran == 0:
        raise InvalidValueError(
            f"{path}: no test ran ({summary.tests} in the report, all skipped or none): "
            "nothing to record",
            field="from_junit",
        )
    return (1.0 if summary.success else 0.0), summary.evidence()
