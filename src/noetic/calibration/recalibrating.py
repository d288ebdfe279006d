"""Deciding on calibrated numbers: the map in force for an agent, kept in the store, and the
release gate (the maths is :mod:`.recalibration`; the settings, ``[calibration] decide_on`` and
``[gate]`` in ``config.toml`` or ``calibration: {decide_on: stated}`` in a profile, and the rest
of what a user sees are in ``docs/calibration.md``).

A decision for agent ``A`` (model ``M``) uses the map fitted on ``A``'s own PREFLIGHT statements
(the one ``stated_value`` rule), else on those of every agent of model ``M``, else on the whole
store's (:func:`_scoped`): the first scope with enough outcomes to prove a map on decides, so an
agent whose own outcomes say its statements stand is not corrected by other agents' maps. The
fit is kept in ``calibration_maps`` with the outcomes it saw and refitted only when outcomes
arrived since; a refit reads only what changed (:class:`Points`), so the map after each outcome
is the one a fit from scratch gives, at the cost of the new outcomes.
"""

from __future__ import annotations

import _thread
import json
from pathlib import Path
from weakref import WeakKeyDictionary

from noetic.assessment import Calibrated, Release
from noetic.calibration.outcomes import Filters, phase_points
from noetic.calibration.per_phase import PhasePoint
from noetic.calibration.recalibration import Fitted, Gate, recalibrate, release_gate, split
from noetic.plain import Value
from noetic.store import outcome_rows
from noetic.store.base import BaseStore as Store
from noetic.store.reads import last_outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final, Literal

    Scope = Literal["agent", "model", "store"]


RECORD_TASKS: Final = 40
FIT: Final = 2
"""The fit's version, kept in each map's body: a map kept by a fit that has changed since (or by
one before the version was kept) is refitted at the next decision, as if outcomes had arrived.
2: Newton's steps halved where they overshoot (:func:`~.recalibration.fit_logistic`)."""


class Settings(Value):
    """``[calibration]`` and the release gate's part of ``[gate]``."""

    decide_on: str = "calibrated"
    max_failure_rate: float | None = None
    confidence: float = 0.95


def read_settings(home: Path) -> Settings:
    """The settings from ``<home>/config.toml`` (defaults when absent), checked by
    :mod:`noetic.config`: a bad value is an error naming the file, the section and the key."""
    from noetic.config import load

    config = load(home)
    if not config.data:  # no config.toml: the defaults, without building its sections
        return Settings()
    gate = config.gate
    return Settings(
        decide_on=config.calibration.decide_on,
        max_failure_rate=gate.max_failure_rate,
        confidence=gate.confidence,
    )


# fitting and keeping -----------------------------------------------------------------------


class Points:
    """The store's points (:func:`~.outcomes.phase_points` with no filter), kept in step with
    its outcomes: each update recomputes the points of the tasks of the outcomes after the
    newest it has seen, alone, and starts again from every outcome when the store does not hold
    what it saw (fewer or more outcomes than it counted, or its newest one changed)."""

    EVERY: Final = 500  # more new tasks than this: one read of everything is cheaper

    def __init__(self) -> None:
        self.lock = _thread.allocate_lock()  # threading.Lock, without loading threading
        self.clear()

    def clear(self) -> None:
        self.seen = 0  # the outcomes they cover
        self.last: tuple[int, str] = (0, "")  # the newest of them: id, time
        # per task: (its newest outcome's time, its first outcome's time and id), which is
        # phase_points' order (by the newest time, ties by the first outcome), and its points
        self.order: dict[str, tuple[str, str, int]] = {}
        self.points: dict[str, list[PhasePoint]] = {}
        self.flat: list[PhasePoint] = []

    def update(self, store: Store) -> Points:
        with self.lock:
            rows = outcome_rows.outcomes_from(store, self.last[0])
            new = rows[1:] if self.last[0] else rows
            moved = self.last[0] and (not rows or rows[0][:2] != self.last)
            if moved or self.seen + len(new) != outcome_rows.count_outcomes(store):
                self.clear()
                new = outcome_rows.outcomes_from(store, 0)
            if new:
                self._add(store, new)
        return self

    def snapshot(self) -> Snapshot:
        """The points as they now are, for a fit elsewhere (the list is replaced, never changed,
        by an update)."""
        with self.lock:
            return self.flat, self.seen, self.last[0]

    def _add(self, store: Store, new: list[tuple[int, str, str]]) -> None:
        for outcome_id, at, task in new:
            was = self.order.get(task)
            first = (at, outcome_id) if was is None else min(was[1:], (at, outcome_id))
            self.order[task] = (at if was is None else max(was[0], at), *first)
        tasks = {task for _, _, task in new}
        every = len(tasks) > self.EVERY
        if every:
            self.points = {}
        for task in () if every else tasks:
            self.points.pop(task, None)
        for p in phase_points(store, Filters(), tasks=None if every else tasks):
            self.points.setdefault(p.cascade_id, []).append(p)
        self.seen += len(new)
        self.last = new[-1][:2]
        ordered = sorted(self.points, key=self.order.__getitem__)  # nearly sorted: linear
        self.flat = [p for task in ordered for p in self.points[task]]


_KEPT: WeakKeyDictionary[Store, Points] = WeakKeyDictionary()
Snapshot = tuple[list[PhasePoint], int, int]  # the points, the outcomes they cover, the newest's id


def points_of(store: Store) -> Points:
    """The points this process keeps for ``store``, brought up to date (:class:`Points`)."""
    kept_points = _KEPT.get(store)
    if kept_points is None:
        kept_points = _KEPT[store] = Points()
    return kept_points.update(store)


def _key(ai_id: str, ai_model: str | None) -> str:
    return f"{ai_id}\x1f{ai_model or ''}"


def _scoped(
    points: list[PhasePoint], ai_id: str, ai_model: str | None
) -> tuple[Scope | None, list[PhasePoint]]:
    """The first scope with enough PREFLIGHT outcomes to prove a map on (module docstring)."""
    pre = [p for p in points if p.phase == "preflight"]
    scopes: list[tuple[Scope, list[PhasePoint]]] = [("agent", [p for p in pre if p.agent == ai_id])]
    if ai_model:
        scopes.append(("model", [p for p in pre if p.model == ai_model]))
    scopes.append(("store", pre))
    for scope, mine in scopes:
        if split(len(mine)) is not None:
            return scope, mine
    return None, []


def decision_points(points: list[PhasePoint], tasks: set[str]) -> list[tuple[float, float]]:
    """Each task's statement where it decided to act: its last CHECK, else its PREFLIGHT."""
    pre: dict[str, PhasePoint] = {}
    check: dict[str, PhasePoint] = {}
    for p in points:
        if p.cascade_id not in tasks:
            continue
        if p.phase == "preflight":
            pre[p.cascade_id] = p
        elif p.phase == "check":
            check[p.cascade_id] = p
    return [((check.get(c) or pre[c]).stated, pre[c].observed) for c in pre]


def fit_for(
    store: Store, ai_id: str, ai_model: str | None, settings: Settings | None = None
) -> dict[str, Any]:
    """Fit ``(ai_id, ai_model)``'s map (and the configured gate) on the store's outcomes as
    they are now, keep it, and return it."""
    return fitted_for(store, ai_id, ai_model, settings)[0]


def fitted_for(
    store: Store, ai_id: str, ai_model: str | None, settings: Settings | None = None
) -> tuple[dict[str, Any], Fitted]:
    """:func:`fit_for`, with the map fitted; the next decision reads the kept body as this
    (:func:`_parsed`)."""
    return keep(store, fit_snapshot(points_of(store).snapshot(), ai_id, ai_model, settings))


class Refit:
    """A map fitted on the store's outcomes and not yet kept: whose (``key``), on which
    outcomes (``stamp``: how many, the newest's id), its body and the map."""

    __slots__ = ("body", "fitted", "key", "stamp")

    def __init__(
        self, key: str, stamp: tuple[int, int], body: dict[str, Any], fitted: Fitted
    ) -> None:
        self.key, self.stamp, self.body, self.fitted = key, stamp, body, fitted


def fit_snapshot(
    points: Snapshot, ai_id: str, ai_model: str | None, settings: Settings | None = None
) -> Refit:
    """``(ai_id, ai_model)``'s map fitted on points already read (:meth:`Points.snapshot`):
    arithmetic alone, reading and writing nothing, so a thread can fit it while the thread that
    reads and writes the store keeps it (:func:`keep`); the store's connections then do not
    each find the other's writes and read their pages again."""
    flat, seen, last_id = points
    body, fitted = fit_on(flat, ai_id, ai_model, settings)
    return Refit(_key(ai_id, ai_model), (seen, last_id), body, fitted)


def keep(store: Store, fitted: Refit) -> tuple[dict[str, Any], Fitted]:
    """Keep a map :func:`fit_snapshot` fitted (in the caller's write, if one is open); the next
    decision reads the kept body as this (:func:`_parsed`)."""
    text = _keep(store, fitted.key, fitted.stamp, fitted.body)
    _remember(text, (json.loads(text), fitted.fitted))
    return fitted.body, fitted.fitted


def fit_on(
    points: list[PhasePoint], ai_id: str, ai_model: str | None, settings: Settings | None = None
) -> tuple[dict[str, Any], Fitted]:
    """``(ai_id, ai_model)``'s map (and the configured gate) fitted on the store's ``points``
    (oldest task first): the body kept, and the map."""
    scope, mine = _scoped(points, ai_id, ai_model)
    fitted = recalibrate([p.stated for p in mine], [p.observed for p in mine])
    own = [p for p in points if p.phase == "preflight" and p.agent == ai_id][-RECORD_TASKS:]
    body: dict[str, Any] = {
        "fit": FIT,
        "ai_id": ai_id,
        "ai_model": ai_model,
        "scope": scope,
        "fitted": fitted.to_json(),
        "record": _record(own, fitted if scope == "agent" else None),
        "gates": {},
    }
    if settings is not None and settings.max_failure_rate is not None:
        gate = _gate(points, mine, settings)
        body["gates"][_gate_key(settings)] = gate.as_dict()
    return body, fitted


def _gate(points: list[PhasePoint], mine: list[PhasePoint], settings: Settings) -> Gate:
    assert settings.max_failure_rate is not None
    pairs = decision_points(points, {p.cascade_id for p in mine})
    return release_gate(
        [p for p, _ in pairs], [y for _, y in pairs], settings.max_failure_rate, settings.confidence
    )


def _gate_key(settings: Settings) -> str:
    return f"{settings.max_failure_rate}|{settings.confidence}"


def _record(own: list[PhasePoint], fitted: Fitted | None) -> dict[str, Any] | None:
    """What the agent's last PREFLIGHT statements said and what happened (plain numbers)."""
    if not own:
        return None
    mean = sum(p.stated for p in own) / len(own)
    return {
        "tasks": len(own),
        "mean_stated": round(mean, 4),
        "succeeded": round(sum(p.observed for p in own) / len(own), 4),
        "calibrated": round(fitted(mean), 4) if fitted is not None and fitted.in_force else None,
    }


def _keep(store: Store, key: str, stamp: tuple[int, int], body: dict[str, Any]) -> str:
    """Keep ``body`` as ``key``'s map; the text kept."""
    text = json.dumps(body)
    outcome_rows.keep_map(store, key, stamp, text)
    return text


def kept(
    store: Store, ai_id: str, ai_model: str | None, settings: Settings | None = None
) -> tuple[dict[str, Any], Fitted]:
    """``(ai_id, ai_model)``'s map as kept, and the map read (a body read before is not read
    again); refitted first only when outcomes arrived since, or another fit kept it (:data:`FIT`),
    or the configured gate was never worked out."""
    row = outcome_rows.kept_map(store, _key(ai_id, ai_model))
    # outcomes are only ever added: the newest one's id (one probe of the primary key, however
    # many there are) says whether any arrived
    if row is None or row.last_id != last_outcome(store):
        return fitted_for(store, ai_id, ai_model, settings)
    body, fitted = _parsed(row.body)
    if body.get("fit") != FIT:  # kept by another fit: refitted by this one
        return fitted_for(store, ai_id, ai_model, settings)
    wanted = settings is not None and settings.max_failure_rate is not None
    if wanted and _gate_key(settings) not in body["gates"]:  # type: ignore[arg-type]
        assert settings is not None
        points = points_of(store).flat
        _, mine = _scoped(points, ai_id, ai_model)
        gate = _gate(points, mine, settings).as_dict()
        body = {**body, "gates": {**body["gates"], _gate_key(settings): gate}}
        _keep(store, _key(ai_id, ai_model), (int(row[0]), int(row[1])), body)
    return body, fitted


_PARSED: dict[str, tuple[dict[str, Any], Fitted]] = {}
_PARSED_MOST: Final = 64


def _parsed(text: str) -> tuple[dict[str, Any], Fitted]:
    """A kept map's body and its map, read once per text (each decision reads the row; the
    body changes only when it is refitted). A body is never changed in place."""
    found = _PARSED.get(text)
    if found is None:
        body = json.loads(text)
        found = _remember(text, (body, Fitted.from_json(body["fitted"])))
    return found


def _remember(text: str, parsed: tuple[dict[str, Any], Fitted]) -> tuple[dict[str, Any], Fitted]:
    if len(_PARSED) >= _PARSED_MOST:  # bodies of maps since refitted
        _PARSED.clear()
    _PARSED[text] = parsed
    return parsed


# deciding -----------------------------------------------------------------------------------


class ForDecision(Value):
    """What a decision needs: the calibrated value (``None``: no map in force, or turned off),
    and at CHECK the release gate's threshold or why there is none."""

    calibrated: Calibrated | None
    release: Release | None = None
    gate_note: str | None = None


def meaning(
    body: dict[str, Any], fitted: Fitted, stated: float, basis: str, shown: float | None = None
) -> Calibrated | None:
    """What ``stated`` (quoted as ``shown``, else as it is) means by the map in force (``body``
    and ``fitted``, as kept); None when no map is in force."""
    if not fitted.in_force:
        return None
    return Calibrated(
        value=round(fitted(stated), 6),
        stated=stated if shown is None else shown,
        stated_from=basis,
        outcomes=fitted.outcomes,
        method=fitted.map.method,
        scope=body["scope"],
    )


def for_decision(
    store: Store,
    ai_id: str,
    ai_model: str | None,
    stated: float,
    basis: Literal["p_success", "confidence"],
    *,
    settings: Settings,
    profile_decide_on: str = "calibrated",
    check: bool = False,
) -> ForDecision:
    """The calibrated value of ``stated`` for this agent, and the gate at CHECK."""
    if settings.decide_on == "stated" or profile_decide_on == "stated":
        return ForDecision(None)
    if settings.max_failure_rate is None:
        check = False  # no gate configured
    body, fitted = kept(store, ai_id, ai_model, settings if check else None)
    calibrated = meaning(body, fitted, stated, basis, shown=round(stated, 6))
    if not check:
        return ForDecision(calibrated)
    gate = Gate(**body["gates"][_gate_key(settings)])
    if gate.threshold is None:
        return ForDecision(calibrated, None, f"the release gate has no threshold: {gate.reason}")
    shown = fitted(gate.threshold) if fitted.in_force else gate.threshold
    return ForDecision(
        calibrated,
        Release(
            stated=gate.threshold,
            calibrated=round(shown, 6),
            max_failure_rate=gate.max_failure_rate,
            confidence=gate.confidence,
            released=gate.released,
            failures=gate.failures,
        ),
    )
