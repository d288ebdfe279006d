"""Rich rendering for people: vector tables coloured by the seed's thresholds."""

from __future__ import annotations

from noetic.vectors import TIER_OF, VECTOR_NAMES, oriented

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rich.table import Table

    from noetic.assessment import Decision
    from noetic.calibration import BasicCalibration
    from noetic.recall.selection import RecallResult


_COLOURS = ((0.90, "green"), (0.80, "yellow"), (0.70, "dark_orange"))


def colour(value: float) -> str:
    """≥ 0.90 green, ≥ 0.80 yellow, ≥ 0.70 orange, below red (on the 'higher is better' scale)."""
    return next((name for floor, name in _COLOURS if value >= floor), "red")


def bar(value: float, width: int = 20, empty: str = "░") -> str:
    filled = round(max(0.0, min(1.0, value)) * width)
    return "█" * filled + empty * (width - filled)


def table(*headers: str, title: str | None = None) -> Table:
    """A table with box drawing on a terminal, and plain aligned columns for a pipe or a file
    (what an agent or ``grep``/``awk`` reads)."""
    import sys

    from rich import box
    from rich.table import Table

    framed = sys.stdout.isatty()
    return Table(
        *headers,
        title=title,
        title_justify="left",
        box=box.HEAVY_HEAD if framed else None,
        pad_edge=framed,
    )


def vector_table(
    vectors: dict[str, float], title: str, before: dict[str, float] | None = None
) -> Table | str:
    """The scores, one vector a row: a Rich table for a terminal; for a pipe or a file the
    same text as lines (the title's markup kept for the console), without loading Rich."""
    headers = ["vector", "tier", *(["before"] if before is not None else []), "score", ""]
    headers += ["Δ"] if before is not None else []
    rows = []
    for name in [n for n in VECTOR_NAMES if n in vectors]:
        value = vectors[name]
        shown = oriented(name, value)
        label = f"{name} ↓" if shown != value or name in ("density", "uncertainty") else name
        row = [label, TIER_OF.get(name, "meta")]
        if before is not None:
            row.append(f"{before[name]:.2f}" if name in before else "–")
        row += [f"[{colour(shown)}]{value:.2f}[/]", f"[{colour(shown)}]{bar(shown)}[/]"]
        if before is not None:
            delta = value - before[name] if name in before else 0.0
            row.append(f"{delta:+.2f}")
        rows.append(row)
    from noetic.cli.output import plain, unmarked

    shown_title = unmarked(title) if plain() else None
    if shown_title is not None and shown_title.isprintable():
        return "\n".join([title, *_columns(headers, [list(map(_text, r)) for r in rows])])
    out = table(title=title)
    for header in headers:
        right = header in ("before", "score", "Δ")
        out.add_column(
            header,
            style="dim" if header == "tier" else None,
            justify="right" if right else "left",
            no_wrap=not header,
        )
    for row in rows:
        out.add_row(*row)
    return out


def _text(markup: str) -> str:
    return markup.split("]", 1)[1].removesuffix("[/]") if markup.startswith("[") else markup


def _columns(headers: list[str], rows: list[list[str]]) -> list[str]:
    """The lines Rich gives a table without a box: each column as wide as its widest cell, one
    space each side of a column but at the table's edges; numbers on the right."""
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=True)]
    last = len(widths) - 1
    lines = []
    for cells in [headers, *rows]:
        parts = []
        for i, (cell, width, header) in enumerate(zip(cells, widths, headers, strict=True)):
            fitted = cell.rjust(width) if header in ("before", "score", "Δ") else cell.ljust(width)
            parts.append(("" if i == 0 else " ") + fitted + ("" if i == last else " "))
        lines.append("".join(parts))
    return lines


def decision_line(decision: Decision) -> str:
    from noetic.cli.output import esc

    style = "green" if decision.action == "PROCEED" else "yellow"
    threshold = f" (threshold {decision.threshold:.2f})" if decision.threshold is not None else ""
    return (
        f"[bold {style}]{decision.action.value}[/] · confidence "
        f"[{colour(decision.confidence)}]{decision.confidence:.2f}[/]{threshold} — "
        f"{esc(decision.reason)}"
    )


def calibration_line(cal: BasicCalibration) -> str:
    style = "green" if cal.classification == "well_calibrated" else "yellow"
    return (
        f"against itself (PREFLIGHT → POSTFLIGHT; outcomes judge it): "
        f"[bold {style}]{cal.classification.value}[/] · confidence "
        f"{cal.confidence_pre:.2f} → {cal.confidence_post:.2f} ({cal.confidence_change:+.2f}, "
        f"tolerance ±{cal.tolerance:.2f}) · learning {cal.learning_magnitude:.2f}"
    )


def recall_accounting(result: RecallResult) -> str:
    """Every task considered, loaded or left out, and why."""
    loaded = result.considered - sum(result.left_out.values())
    unverified = f" ({result.unverified} without an outcome yet)" if result.unverified else ""
    reasons = {
        "calibration_filter": "by the calibration filter (their outcome contradicted the "
        "prediction)",
        "below_similarity": "under the similarity floor",
        "beyond_strategy": f"ranked below what the {result.strategy.value} strategy loads",
        "over_budget": f"over the {result.budget_tokens}-token budget",
    }
    left = [f"{n} {reasons.get(k, k)}" for k, n in result.left_out.items() if n]
    return f"considered {result.considered} earlier task(s){unverified}: loaded {loaded}" + (
        "; left out " + ", ".join(left) if left else ""
    )


def interval(i: Any, signed: bool = False, digits: int = 2) -> str:
    """A value with its interval, ``0.12 [0.05, 0.20]`` (the value alone when it has none)."""
    if i.value is None:
        return "—"
    f = f"{{:+.{digits}f}}" if signed else f"{{:.{digits}f}}"
    if i.low is None or i.high is None:
        return f.format(i.value)
    return f"{f.format(i.value)} [{f.format(i.low)}, {f.format(i.high)}]"


def stated_as(stated: str | None, stated_from: dict[str, int]) -> str:
    """What a calibration judged, as text: ``p_success (12)``, ``the vectors' confidence (3)``,
    ``mixed: 8 p_success, 4 the vectors' confidence``, or ``nothing yet``."""
    names = {"p_success": "p_success", "confidence": "the vectors' confidence"}
    if stated is None:
        return "nothing yet"
    if stated == "mixed":
        return "mixed: " + ", ".join(f"{stated_from[k]} {names[k]}" for k in names)
    return f"{names[stated]} ({stated_from[stated]})"


def _caveat(metric: Any) -> str:
    """``*`` beside a figure that has no interval (the footnote below the table says why)."""
    return "*" if metric.low is None else ""


def phase_lines(report: Any) -> list[str]:
    """The summary, the per-phase table (and per group), and the review comparison, as text."""
    s = report.summary
    lines = [
        f"  summary ({s.phase}, stated as {s.stated or '—'}): {s.n} tasks, "
        f"{s.successes:g} successes, rate {interval(s.success_rate)}, "
        + (f"stated {s.mean_stated:.2f}, " if s.mean_stated is not None else "")
        + f"gap {interval(s.gap, True)}"
        + (" (significant)" if s.significant else ""),
        *(f"    {line}" for line in s.more),
    ]

    def table(by_phase: dict[str, Any], indent: str = "  ") -> list[str]:
        rows = [f"{indent}{'phase':<19}{'n':>4}  {'stated':>6}  {'rate':>5}  gap (95%)"
                f"              Brier   AUROC"]  # fmt: skip
        for name, ph in by_phase.items():
            if not ph.n:
                rows.append(f"{indent}{name:<19}{0:>4}  {'—':>6}")
                continue
            auroc = (
                f"{ph.auroc.value:.2f}{_caveat(ph.auroc)}" if ph.auroc.value is not None else "—"
            )
            rows.append(
                f"{indent}{name:<19}{ph.n:>4}  {ph.mean_stated:>6.2f}  "
                f"{ph.success_rate.value:>5.2f}  {interval(ph.gap, True):<22} "
                f"{ph.brier.value:.3f}{_caveat(ph.brier):<2} {auroc}"
            )
        return rows

    lines += ["", *table(report.by_phase)]
    caveats = {
        f"{name} {label}: {metric.reason}"
        for name, ph in report.by_phase.items()
        for label, metric in (("Brier", ph.brier), ("AUROC", ph.auroc))
        if ph.n and metric.value is not None and metric.low is None
    }
    lines += [f"  * {c}" for c in sorted(caveats)]
    for group in report.groups:
        lines += ["", f"  {report.by} {group.value} ({group.tasks} tasks)"]
        lines += table(group.by_phase, "    ")
    for r in report.reviews:
        lines.append(
            f"\n  {r.agent}: standard review gap {interval(r.standard.gap, True)} "
            f"(n {r.standard.n}), adversarial {interval(r.adversarial.gap, True)} "
            f"(n {r.adversarial.n}); difference {interval(r.difference, True)}"
            + (" (significant)" if r.significant else "")
        )
    return lines
