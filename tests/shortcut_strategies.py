"""Strategies that exist only to prove the scorers cannot be gamed (register one as an installed
package would, with the `plugins` fixture: `plugins.strategy(name, "shortcut_strategies:Class")`;
never shipped). The shortcut rules a reviewer would try first are first-class controls now:
`stores.shortcuts`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, Literal

from stores.protocol import Bundle, ContextRequest, Event, Forget
from stores.retrieval.history_stuffing import HistoryStuffing, HistoryStuffingParams


class OverBudget(HistoryStuffing):
    """`history_stuffing` that ignores the probe's budget: the whole history goes into the
    context, as a transcript. It exists to prove that going over the budget never pays: the
    retrieval criteria judge what the model would receive (the context cut at the budget)."""

    name: ClassVar[str] = "over_budget"

    def context(self, request: ContextRequest) -> Bundle:
        return super().context(replace(request, budget_tokens=10**9))


GATES = ("token_budget", "provenance", "idempotency", "isolation", "self_recall")
"""The gates `Broken` can be told to break, one each."""


@dataclass(frozen=True)
class BrokenParams(HistoryStuffingParams):
    """Parameters of `Broken`."""

    breaks: Literal["token_budget", "provenance", "idempotency", "isolation", "self_recall"] = "token_budget"
    """The gate it breaks: ignore the budget, cite no sources, answer differently after `reset()`,
    mix every customer's history together, or keep its memory through `reset()`."""


class Broken(HistoryStuffing):
    """`history_stuffing` with one deliberate defect, so a test can see each gate fail (never shipped)."""

    name: ClassVar[str] = "broken"
    Params = BrokenParams

    def __init__(self, params: BrokenParams | None = None) -> None:
        super().__init__(params or BrokenParams())
        self.was_reset = False

    def observe(self, event: Event) -> None:
        if self.params.breaks == "isolation" and not isinstance(event, Forget):
            event = replace(event, subject="everyone")  # one pile for all customers
        super().observe(event)

    def reset(self) -> None:
        self.was_reset = True
        if self.params.breaks != "self_recall":  # self_recall: memory survives the reset
            super().reset()

    def context(self, request: ContextRequest) -> Bundle:
        breaks = self.params.breaks
        if breaks == "token_budget":
            return super().context(replace(request, budget_tokens=10**9))
        if breaks == "isolation":
            return super().context(replace(request, subject="everyone"))
        bundle = super().context(request)
        if breaks == "provenance":
            c = bundle.candidates
            c.source_ids = [() if inc else src for src, inc in zip(c.source_ids, c.included_mask.tolist())]
        elif breaks == "idempotency" and self.was_reset:
            # after a reset the same lines come back in the opposite order: not the bundle of the plain replay
            header, *lines = bundle.text.split("\n")
            bundle.text = "\n".join([header, *reversed(lines)])
        return bundle
