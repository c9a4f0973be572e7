"""Gold that can be met: what the best possible context of each probe costs, as the oracle builds it.

A probe's gold is only fair when some strategy could satisfy it within the probe's budget. The
oracle (`stores.controls.Oracle`) is that strategy: it includes exactly the items the gold asks
for, rendered the way every strategy renders them (`stores.memory.render_line`, under the
`stores.packing.header_for` header), and nothing else. `probe_costs` replays a scenario's
history the way a strategy observes it and, at each probe, renders what the oracle would put in
front of the model and counts it with the project tokenizer. Validation refuses a probe whose
cost exceeds its budget, and one whose gold both wants an item in the context and wants it out,
so a valid file is one the oracle scores 1.0 on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from stores.controls import oracle_conflicts, oracle_items
from stores.memory import RESOLUTION_ROLE, render_line
from stores.packing import header_for
from stores.protocol import ContextRequest, Forget, Resolution, Turn
from stores.tokens import count_lines_tokens, count_text_tokens

from harness.format.model import Probe, Scenario


@dataclass(frozen=True)
class ProbeCost:
    """What the oracle's context of one probe costs against the probe's budget."""

    index: int
    """The probe's position among the scenario's events (and the file's `events`)."""
    probe: Probe
    """The probe."""
    tokens: int
    """Tokens of the oracle's whole context text: the header plus one line per item."""
    header_tokens: int
    """Tokens of the header alone."""
    items: tuple[str, ...]
    """The ids the oracle includes, best first."""
    conflicts: tuple[str, ...]
    """What the gold wants both in and out of the context: ids, or `text "..."` for a forbidden
    needle found in a wanted item's line."""

    @property
    def fits(self) -> bool:
        """Whether the oracle's context fits the probe's budget."""
        return self.tokens <= self.probe.budget


class RenderedHistory:
    """One subject's items as the oracle sees them: ids and rendered lines in observation order
    (the generator keeps one per customer to size budgets the way validation checks them)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.lines: list[str] = []
        self.sessions: list[str] = []
        self.pos: dict[str, int] = {}

    def put(self, item_id: str, line: str, session: str = "") -> None:
        """Remember an item's line (and session); a turn seen again changes nothing, a resolution
        replaces its record."""
        i = self.pos.get(item_id)
        if i is None:
            self.pos[item_id] = len(self.ids)
            self.ids.append(item_id)
            self.lines.append(line)
            self.sessions.append(session)
        elif not item_id.endswith("#resolution"):
            return  # a turn delivered again changes nothing
        else:
            self.lines[i] = line  # a later resolution replaces the record in place


def oracle_cost(gold: dict[str, Any], h: RenderedHistory, request: ContextRequest) -> tuple[int, int, list[str]]:
    """(tokens of the oracle's whole context, tokens of its header, the ids it includes) for a
    probe's gold (plain data) over a subject's history so far."""
    items = oracle_items(gold, h.ids, h.lines, h.sessions)
    header = header_for(request)
    # with nothing to include, the oracle (like any strategy) may return an empty context
    text = "\n".join([header, *(h.lines[h.pos[i]] for i in items)]) if items else ""
    # a whole text's count is its lines' (memoized per line: the replay's memories render and count
    # the same lines), as packing counts it
    return count_lines_tokens(text), count_text_tokens(header), items


def probe_costs(scenario: Scenario) -> Iterator[ProbeCost]:
    """The oracle's context cost at every probe of the scenario, in event order."""
    histories: dict[str, RenderedHistory] = {}
    for index, ev in enumerate(scenario.events):
        if isinstance(ev, Turn):
            histories.setdefault(ev.subject, RenderedHistory()).put(ev.id, render_line(ev.role, ev.kind, ev.session, ev.at, ev.text), ev.session)
        elif isinstance(ev, Resolution):
            line = render_line(RESOLUTION_ROLE, "message", ev.session, ev.at, ev.summary, ev.status)
            histories.setdefault(ev.subject, RenderedHistory()).put(ev.id, line, ev.session)
        elif isinstance(ev, Forget):
            histories.pop(ev.subject, None)
        elif isinstance(ev, Probe):
            h = histories.get(ev.subject) or RenderedHistory()
            gold = ev.expect.as_gold()
            tokens, header_tokens, items = oracle_cost(gold, h, ContextRequest(ev.subject, ev.session, ev.task, ev.budget, ev.at))
            lines = [h.lines[h.pos[i]] for i in items]
            yield ProbeCost(index, ev, tokens, header_tokens, tuple(items), tuple(oracle_conflicts(gold, lines)))


def cost_problem(cost: ProbeCost) -> str | None:
    """The sentence validation reports for a probe whose gold cannot be met, else None."""
    if cost.conflicts:
        return (f"the gold of probe '{cost.probe.id}' wants {', '.join(cost.conflicts)} both in the context and "
                "out of it; no strategy can meet both")
    if cost.fits:
        return None
    shown = ", ".join(cost.items[:4]) + (f" and {len(cost.items) - 4} more" if len(cost.items) > 4 else "")
    return (f"the gold of probe '{cost.probe.id}' needs {cost.tokens} tokens as the oracle renders it (header "
            f"{cost.header_tokens} + {len(cost.items)} item(s): {shown or 'none'}), over its budget of "
            f"{cost.probe.budget} by {cost.tokens - cost.probe.budget}; raise the budget to at least {cost.tokens} "
            "or ask for fewer items")
