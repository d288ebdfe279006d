"""The NovaProcess engine: a panel of personas deliberates over the graph in :mod:`.graph`.

:func:`run_nova` opens a run in the store and walks the graph from the question to a decision;
:func:`resume_nova` walks it again for a run that was escalated, failed or killed. Every turn is
written to the store the moment it finishes, keyed by ``round:node:persona``; a resumed walk takes
each turn it already has from the store instead of calling the model, and since every routing
decision is a function of the turns, it retraces the same path and calls the model only for the
turns that are missing.

Each turn's prompt is the persona's file, the node's instructions and a context bounded by
:mod:`.context`. The reply's closing JSON block carries the persona's epistemic state; a reply
without a usable block is asked for once more, then kept as ``unparsed`` with its state unknown;
a final recommendation that stays unreadable ends the run ``failed`` (a run without a decision is
not completed), and resuming it asks the DCE for the recommendation again.
An expert whose calls keep failing is retried once, then left out of the panel (the run says
so); a failing DCE or CAE ends the run ``failed``, resumable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from noetic.assessment import Phase
from noetic.errors import InvalidValueError, ParseError, ProviderError, UsageError, error_name
from noetic.events import DecisionMade, EventKind, PhaseCompleted, PhaseEntered, RunFinished, Timer
from noetic.llm.base import Completion, Provider, Request, complete_streaming
from noetic.llm.structured import complete_parsed
from noetic.llm.tokens import count_tokens
from noetic.nova import prompts
from noetic.nova.decision_log import write_decision_log
from noetic.nova.graph import START, next_node
from noetic.nova.models import (
    DEFAULT_GATE,
    NovaRun,
    NovaSettings,
    OnTurn,
    RunStatus,
    gate_for,
    persona_dirs,
)
from noetic.nova.personas import Catalogue, Pattern, Persona
from noetic.nova.tracking import TaskTrack, phase_node
from noetic.nova.turn_context import Context, assemble, pieces_for
from noetic.nova.turns import (
    ASSESSMENT_NODES,
    Block,
    CritiqueBlock,
    FinalBlock,
    Node,
    Pick,
    Severity,
    State,
    SynthesisBlock,
    Turn,
    UnpackBlock,
    parse_block,
    picks_in,
    turn_key,
)
from noetic.nova.weighting import persona_records, stated_confidences, weighted_confidence
from noetic.runtime.context import RunContext
from noetic.runtime.sentinel import SentinelStop
from noetic.store import nova as records
from noetic.store.base import BaseStore
from noetic.store.rows import now
from noetic.untrusted import check_text_field


class _Stop(Exception):
    def __init__(self, status: RunStatus, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


async def run_nova(
    ctx: RunContext,
    question: str,
    *,
    settings: NovaSettings | None = None,
    on_turn: OnTurn | None = None,
) -> NovaRun:
    """Deliberate on ``question`` with the panel; see the module docstring."""
    settings = settings or NovaSettings()
    check_text_field(question, "question")
    if not question.strip():
        raise InvalidValueError("the question is empty", field="question", value=question)
    catalogue = _panel(ctx, settings)
    run_id = records.create_run(
        ctx.store, question, settings.model_dump(mode="json"), session_id=ctx.session_id
    )
    fields = {"id": run_id, "question": question, "session_id": ctx.session_id}
    return await _Walk(ctx, settings, catalogue, {}, on_turn, **fields).go()


async def resume_nova(
    ctx: RunContext,
    run_id: str,
    *,
    input: str | None = None,
    on_turn: OnTurn | None = None,
    experts: tuple[str, ...] = (),
) -> NovaRun:
    """Continue a run: an escalated one with a person's ``input``, a failed or killed one
    without. Turns already in the store are replayed, not asked again. ``experts`` names the
    panel from now on (a run whose DCE named none can go on with one)."""
    row = records.get_run(ctx.store, run_id)
    if row["status"] == "completed":
        raise UsageError(
            f"Nova run {row['id']} is already completed", fix=f"noetic nova show {row['id']}"
        )
    if input is not None:
        check_text_field(input, "input")
        if not input.strip():
            raise InvalidValueError("the input is empty", field="input", value=input)
    inputs = [*row["inputs"], *([input] if input is not None else [])]
    if row["status"] == "escalated" and not inputs:
        raise UsageError(
            f"Nova run {row['id']} is waiting for a person's decision or guidance",
            fix=f'noetic nova resume {row["id"]} --input "…"',
        )
    settings = NovaSettings.model_validate(row["settings"])
    if experts:
        settings = settings.model_copy(update={"experts": tuple(experts)})
    catalogue = _panel(ctx, settings)
    done = {t.key: t for t in (Turn.model_validate(t) for t in records.turns(ctx.store, row["id"]))}
    for key, turn in list(done.items()):
        if turn.node == Node.FINAL and turn.status != "ok":  # the failure resuming should retry
            records.drop_turn(ctx.store, row["id"], key)
            del done[key]
    records.update_run(
        ctx.store,
        row["id"],
        status="running",
        inputs=inputs,
        settings=settings.model_dump(mode="json"),
    )
    kept = {k: row[k] for k in ("id", "question", "session_id", "cascade_id")}
    return await _Walk(ctx, settings, catalogue, done, on_turn, inputs=inputs, **kept).go()


def stored_run(store: BaseStore, run_id: str) -> NovaRun:
    """A run as the store has it: its last recorded result and every turn."""
    row = records.get_run(store, run_id)
    loaded = [Turn.model_validate(t) for t in records.turns(store, row["id"])]
    result = {k: v for k, v in row["result"].items() if k not in ("turns", "assessments")}
    base = {
        "id": row["id"],
        "question": row["question"],
        "session_id": row["session_id"],
        "cascade_id": row["cascade_id"],
        "inputs": row["inputs"],
        "gate": DEFAULT_GATE,
    }
    return NovaRun.model_validate(
        {
            **base,
            **result,
            "status": row["status"],
            "turns": [t for t in loaded if t.node not in ASSESSMENT_NODES],
            "assessments": [t for t in loaded if t.node in ASSESSMENT_NODES],
        }
    )


def _panel(ctx: RunContext, settings: NovaSettings) -> Catalogue:
    """The run's personas, checked before anything is written, as is its model."""
    catalogue = Catalogue(persona_dirs(ctx.home, settings))
    catalogue.coordinator, catalogue.critic  # noqa: B018  (exactly one of each, or an error)
    for name in settings.experts:
        persona = catalogue.get(name)
        if persona.pattern != Pattern.DOMAIN_EXPERT:
            raise InvalidValueError(
                f"persona {name!r} is a {persona.pattern.value}, not a domain expert",
                field="experts",
                value=name,
            )
    ctx.model  # noqa: B018  (a run without a model is the caller's mistake: say so now)
    return catalogue


class _Walk:
    """One walk over the graph for the run made of ``run``'s fields, under its CHECK gate."""

    def __init__(
        self,
        ctx: RunContext,
        settings: NovaSettings,
        catalogue: Catalogue,
        done: dict[str, Turn],
        on_turn: OnTurn | None,
        **run: Any,
    ) -> None:
        gate, gate_rule = gate_for(ctx, settings)
        self.ctx = ctx
        self.run = NovaRun(status="running", gate=gate, gate_rule=gate_rule, **run)
        self.settings = settings
        self.catalogue = catalogue
        self.dce = catalogue.coordinator
        self.cae = catalogue.critic
        self.done = done
        self.on_turn = on_turn
        self.panel: list[Persona] = []
        self.round = 0
        self.focus = ""
        self.seq = 0
        self.synthesis: SynthesisBlock | None = None
        self.critique: CritiqueBlock | None = None
        self.states: dict[int, State] = {}
        self.providers: dict[str | None, Provider] = {}
        self.track = TaskTrack(ctx, self.run, settings.track)
        self.handlers = {
            Node.UNPACK: self.unpack,
            Node.EXPERTS: self.experts,
            Node.SYNTHESIZE: self.synthesize,
            Node.CHECK: self.check,
            Node.CRITIQUE: self.critique_node,
            Node.REVISE: self.revise,
            Node.FINAL: self.final,
            Node.ESCALATED: self.escalated,
        }

    # the walk ---------------------------------------------------------------------------

    async def go(self) -> NovaRun:
        timer = Timer()
        node = next_node(START)
        with self.ctx.scope():
            try:
                while node != Node.DONE:
                    node = next_node(node, await self.handlers[node]())
                self.finish("completed", "", timer)
            except _Stop as stop:
                self.finish(stop.status, stop.detail, timer)
            except SentinelStop as stop:
                self.finish("failed", f"Sentinel stopped the run: {stop}", timer)
            except ProviderError as exc:
                self.finish("failed", f"a model call failed: {exc}", timer)
        return self.run

    def finish(self, status: RunStatus, detail: str, timer: Timer) -> None:
        self.run.status = status
        self.run.detail = detail
        self.run.ms = timer.ms
        if status in ("completed", "escalated"):
            self.run.decision_log = str(write_decision_log(self.ctx.home, self.run))
        result = self.run.model_dump(mode="json", exclude={"turns", "assessments"})
        ended = None if status == "running" else now()
        records.update_run(
            self.ctx.store, self.run.id, status=status, result=result, ended_at=ended
        )
        self.ctx.emit(
            EventKind.RUN_FINISHED,
            RunFinished(
                status=status,
                ms=timer.ms,
                summary={
                    "run": self.run.id,
                    "turns": len(self.run.turns),
                    "rounds": self.run.rounds,
                    "model_calls": self.run.model_calls,
                    "exit": self.run.exit,
                },
            ),
        )

    def decide(self, label: str, reason: str, rule: str) -> str:
        self.ctx.emit(EventKind.DECISION, DecisionMade(action=label, reason=reason, rule=rule))
        return label

    # nodes ------------------------------------------------------------------------------

    async def unpack(self) -> str:
        fixed = list(self.settings.experts)
        known = {p.short_name for p in self.catalogue.experts()}
        turn = await self.turn(self.dce, Node.UNPACK, check=None if fixed else picks_in(known))
        if fixed:
            picks = [Pick(name=n, reason="chosen by the caller") for n in fixed]
        elif turn.status == "ok":
            picks = UnpackBlock.model_validate(turn.block).experts
        else:
            raise _Stop(
                "failed",
                "the DCE's unpacking named no usable experts after one repair round; "
                "name the panel with --experts",
            )
        if len(picks) > self.settings.max_experts:
            dropped = ", ".join(p.name for p in picks[self.settings.max_experts :])
            self.run.notes.append(
                f"the DCE picked {len(picks)} experts; the panel is capped at "
                f"{self.settings.max_experts}, so {dropped} sat out"
            )
            picks = picks[: self.settings.max_experts]
        self.run.experts = picks
        self.panel = [self.catalogue.get(p.name) for p in picks]
        await self.assessment(Phase.PREFLIGHT, turn.content)
        self.round = 1
        return ""

    async def experts(self) -> str:
        self.run.rounds = self.round
        seqs = [self.next_seq() for _ in self.panel]
        gate = asyncio.Semaphore(self.settings.concurrency)

        async def one(persona: Persona, seq: int) -> Turn:
            async with gate:
                return await self.expert_turn(persona, seq)

        turns = await asyncio.gather(*(one(p, s) for p, s in zip(self.panel, seqs, strict=True)))
        for persona, turn in zip(list(self.panel), turns, strict=True):
            self.record(turn)
            if turn.status == "failed":
                self.panel.remove(persona)
                self.run.notes.append(
                    f"{persona.short_name} failed {self.settings.expert_attempts} times in "
                    f"round {self.round} ({turn.error}); the panel went on without it"
                )
        if not self.panel:
            raise _Stop("failed", "every expert on the panel failed; nothing to synthesise")
        return ""

    async def expert_turn(self, persona: Persona, seq: int) -> Turn:
        error = ""
        for _ in range(self.settings.expert_attempts):
            try:
                return await self.turn(
                    persona, Node.EXPERTS, focus=self.focus, seq=seq, record=False
                )
            except (ProviderError, ParseError) as exc:
                error = f"{error_name(exc)}: {exc}"
        failed = self.made(persona, Node.EXPERTS, seq, status="failed", content="", error=error)
        self.save(failed)
        return failed

    async def synthesize(self) -> str:
        turn = await self.turn(self.dce, Node.SYNTHESIZE, focus=self.focus)
        if turn.status == "ok":
            self.synthesis = SynthesisBlock.model_validate(turn.block)
        states = [
            t.state
            for t in self.run.turns
            if t.round == self.round and t.node in (Node.EXPERTS, Node.SYNTHESIZE) and t.state
        ]
        if states:
            self.states[self.round] = State(
                know=sum(s.know for s in states) / len(states),
                uncertainty=sum(s.uncertainty for s in states) / len(states),
            )
        return ""

    def converged(self) -> bool:
        """The panel's state moved less than epsilon since the previous round."""
        now, before = self.states.get(self.round), self.states.get(self.round - 1)
        if now is None or before is None:
            return False
        moved = max(abs(now.know - before.know), abs(now.uncertainty - before.uncertainty))
        return moved < self.settings.epsilon

    async def check(self) -> str:
        synthesis = self.last(Node.SYNTHESIZE)
        await self.assessment(Phase.CHECK, synthesis.content if synthesis else "")
        u = synthesis.uncertainty if synthesis else None
        gate = self.run.gate
        cal = self.track.calibrated if self.track.on else None
        doubt = ""
        if u is not None and cal is not None and 1 - cal.value > u:
            # what the panel's statement has meant (a map in force) is the doubt the gate weighs
            doubt = (
                f" (the panel stated {cal.stated:.2f}, calibrated {cal.value:.2f} from "
                f"{cal.outcomes} outcomes, method {cal.method}: uncertainty "
                f"{1 - cal.value:.2f})"
            )
            u = round(1 - cal.value, 6)
        if u is not None and u <= gate:
            return self.decide(
                "settled", f"uncertainty {u:.2f} ≤ gate {gate:.2f}{doubt}", "check_gate"
            )
        why = f"uncertainty {u:.2f} > gate {gate:.2f}{doubt}" if u is not None else "state unknown"
        if self.round >= self.settings.max_rounds:
            self.run.notes.append(f"CHECK: {why}, but the {self.round} rounds are used up")
            return self.decide("settled", f"{why}; rounds used up", "max_rounds")
        if self.converged():
            self.run.notes.append(f"CHECK: {why}, but the panel has converged")
            return self.decide("settled", f"{why}; the panel's state converged", "converged")
        question = self.synthesis.open_question if self.synthesis else None
        self.focus = (
            f"The DCE's open question: {question}"
            if question
            else "The panel is still uncertain; resolve what keeps it so."
        )
        self.round += 1
        return self.decide("uncertain", f"{why}: investigate more", "check_gate")

    async def critique_node(self) -> str:
        turn = await self.turn(self.cae, Node.CRITIQUE)
        if turn.status != "ok":
            self.run.notes.append(
                "the critique's severity could not be read; treated as minor (the DCE revises)"
            )
            self.critique = None
            return self.decide("minor", "severity unknown", "critique")
        self.critique = CritiqueBlock.model_validate(turn.block)
        severity = self.critique.severity
        if severity != Severity.CRITICAL:
            return self.decide(severity.value, "; ".join(self.critique.issues), "critique")
        stuck = (
            "the rounds are used up"
            if self.round >= self.settings.max_rounds
            else "the panel has converged"
            if self.converged()
            else None
        )
        if stuck:
            self.run.disagreements = [
                *self.critique.issues,
                *(self.synthesis.disagreements if self.synthesis else []),
            ]
            self.run.exit = "escalated"
            return self.decide("unresolved", f"a critical flaw remains and {stuck}", "escalation")
        self.focus = "The critic found a critical flaw: " + "; ".join(self.critique.issues)
        self.round += 1
        return self.decide("critical", "; ".join(self.critique.issues), "critique")

    async def revise(self) -> str:
        turn = await self.turn(self.dce, Node.REVISE)
        if turn.status == "ok":
            self.synthesis = SynthesisBlock.model_validate(turn.block)
        self.run.exit = self.run.exit or "revised"
        return ""

    async def escalated(self) -> str:
        if not self.run.inputs:
            raise _Stop(
                "escalated",
                f"no consensus after {self.round} round(s); a person decides "
                f"(noetic nova resume {self.run.id} --input …)",
            )
        self.run.notes.append("a person's input decided the escalation")
        return "input"

    async def final(self) -> str:
        turn = await self.turn(self.dce, Node.FINAL)
        if self.run.exit is None:
            self.run.exit = self.critique.severity.value if self.critique else "settled"
        if turn.status != "ok":
            raise _Stop(
                "failed",
                "the DCE's final recommendation could not be read after one repair round, so "
                f"the run has no decision; noetic nova resume {self.run.id} asks for it again",
            )
        block = FinalBlock.model_validate(turn.block)
        for field in ("recommendation", "confidence", "tradeoffs", "dissent"):
            setattr(self.run, field, getattr(block, field))
        self.weigh()
        await self.assessment(Phase.POSTFLIGHT, turn.content)
        return ""

    def weigh(self) -> None:
        """The final confidence, weighted by the personas' track records when asked to be."""
        if self.settings.weighting != "calibrated":
            self.run.weighting = "dce"
            return
        stated = stated_confidences(self.run.turns)
        value, weights, how = weighted_confidence(
            stated, persona_records(self.ctx.store), self.settings.min_outcomes
        )
        self.run.weighting = how
        self.run.weights = weights
        if value is not None:
            self.run.notes.append(
                f"final confidence {value:.2f} weighted by track record (the DCE said "
                f"{self.run.confidence:.2f})"
            )
            self.run.confidence = value

    async def assessment(self, phase: Phase, findings: str) -> None:
        """The run's task assessment at ``phase`` (see :mod:`noetic.nova.tracking`)."""
        if not self.track.on:
            return
        node = phase_node(phase)
        seq = self.next_seq()
        stub = self.made(self.dce, node, seq, role="panel assessment", status="ok", content="")
        replayed = self.done.get(stub.key)
        if replayed is not None:
            self.run.replayed += 1
        turn = await self.track.assess(
            phase, stub, findings, self.provider(self.dce), self.bounded, replayed
        )
        if turn is not None:
            self.save(turn)
            self.run.assessments.append(turn)
            if phase == Phase.PREFLIGHT and self.run.cascade_id:
                records.update_run(self.ctx.store, self.run.id, cascade_id=self.run.cascade_id)

    # turns ------------------------------------------------------------------------------

    def made(self, persona: Persona, node: Node, seq: int, **fields: Any) -> Turn:
        """A turn of ``persona`` at ``node`` in this round, with ``fields`` (a ``role`` too)."""
        made = {"seq": seq, "round": self.round, "node": node, "persona": persona.short_name}
        return Turn.model_validate({**made, "role": persona.role, **fields})

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def last(self, *nodes: Node) -> Turn | None:
        return next((turn for turn in reversed(self.run.turns) if turn.node in nodes), None)

    def provider(self, persona: Persona) -> Provider:
        if persona.model not in self.providers:
            self.providers[persona.model] = self.ctx.provider_for(persona.model)
        return self.providers[persona.model]

    def streamed(self, persona: Persona, node: Node) -> Provider:
        """The persona's model; a turn a person waits on alone streams its text to
        ``ctx.on_text`` (the experts' concurrent turns do not, so they never interleave)."""
        provider = self.provider(persona)
        if self.ctx.on_text is None or node == Node.EXPERTS:
            return provider
        return _Streamed(provider, self.ctx.on_text)

    def context(self, persona: Persona, node: Node, focus: str) -> Context:
        catalogue = "\n".join(p.card() for p in self.catalogue.experts())
        recalled = self.recall() if node == Node.UNPACK else ""
        guidance = "\n".join(self.run.inputs) if node == Node.FINAL else ""
        pieces = pieces_for(
            node,
            persona.short_name,
            self.round,
            self.run.question,
            self.run.turns,
            focus=focus,
            catalogue=catalogue,
            recall=recalled,
            guidance=guidance,
        )
        return assemble(pieces, self.settings.context_tokens)

    def recall(self) -> str:
        """What the project already knows about the question, within the recall budget."""
        if not self.settings.recall or not self.settings.recall_tokens:
            return ""
        from noetic.recall.selection import recall_for_current_session

        result = recall_for_current_session(
            self.ctx.store,
            self.run.question,
            session_id=self.ctx.session_id,
            budget=self.settings.recall_tokens,
        )
        self.run.recall_tokens = result.tokens
        return result.context

    def request(
        self, persona: Persona, node: Node, seq: int, focus: str
    ) -> tuple[Request, int, int]:
        """The turn's request, its context's tokens and its whole prompt's tokens."""
        context = self.context(persona, node, focus)
        instruction = prompts.instruction(node, self.settings, focus)
        system = prompts.system(persona, node)
        header = prompts.header(seq, node, self.round, persona.short_name)
        user = f"{header}\n\n{context.text}\n\n## Your task\n{instruction}"
        request = Request.of(user, system=system, max_tokens=self.settings.reply_tokens)
        return request, context.tokens, count_tokens(system) + count_tokens(user)

    async def turn(
        self,
        persona: Persona,
        node: Node,
        *,
        focus: str = "",
        check: Callable[[Block], None] | None = None,
        seq: int | None = None,
        record: bool = True,
    ) -> Turn:
        """One persona's turn at ``node``: replayed from the store if it is there, else asked."""
        seq = seq if seq is not None else self.next_seq()
        key = turn_key(self.round, node, persona.short_name)
        if key in self.done:
            turn = self.done[key]
            self.run.replayed += 1
            if record:
                self.record(turn)
            return turn
        request, context_tokens, prompt_tokens = self.request(persona, node, seq, focus)
        phase = PhaseEntered(phase=f"NOVA_{node.value.upper()}", stage=seq, role=persona.short_name)
        self.ctx.emit(EventKind.PHASE_ENTERED, phase)
        timer = Timer()
        replies: list[Completion] = []
        block: Block | None = None
        try:
            block = await self.bounded(
                complete_parsed(
                    self.streamed(persona, node),
                    request,
                    lambda text: parse_block(node, text, check),
                    expected="your whole turn again, ending with the corrected JSON object",
                    replies=replies,
                )
            )
        except ParseError:
            block = None
        finally:
            self.run.model_calls += len(replies)
        self.ctx.emit(EventKind.PHASE_COMPLETED, PhaseCompleted(**phase.model_dump(), ms=timer.ms))
        first = replies[0]
        turn = self.made(
            persona,
            node,
            seq,
            status="ok" if block is not None else "unparsed",
            content=first.text if block is None or len(replies) == 1 else replies[-1].text,
            know=block.know if block else None,
            uncertainty=block.uncertainty if block else None,
            block=block.model_dump(mode="json") if block else {},
            model=f"{first.provider}:{first.model}",
            ms=timer.ms,
            calls=len(replies),
            context_tokens=context_tokens,
            prompt_tokens=prompt_tokens,
            tokens_in=sum(r.usage.input_tokens for r in replies),
            tokens_out=sum(r.usage.output_tokens for r in replies),
        )
        self.save(turn)
        if record:
            self.record(turn)
        return turn

    async def bounded(self, awaitable: Any) -> Any:
        try:
            return await asyncio.wait_for(awaitable, self.ctx.sentinel.remaining())
        except TimeoutError:
            self.ctx.sentinel.timed_out()

    def save(self, turn: Turn) -> None:
        records.save_turn(
            self.ctx.store, self.run.id, turn.seq, turn.key, turn.model_dump(mode="json")
        )

    def record(self, turn: Turn) -> None:
        self.run.turns.append(turn)
        self.run.prompt_tokens += turn.prompt_tokens
        if self.on_turn is not None:
            self.on_turn(turn)


class _Streamed:
    """A provider whose replies are handed to ``on_text`` as they are written."""

    def __init__(self, inner: Provider, on_text: Callable[[str], None]) -> None:
        self.inner = inner
        self.on_text = on_text
        self.name = inner.name
        self.model = inner.model

    async def complete(self, request: Request) -> Completion:
        return await complete_streaming(self.inner, request, self.on_text)
