"""Text and Markdown renderings of a check or a comparison (Markdown fits a PR comment)."""

from __future__ import annotations

import math
from typing import Sequence

from harness.ci.check import EPS, CheckResult, Finding
from harness.analysis.compare import CompareResult

MAX_NOTES = 20
MAX_FLIPS_MD = 50


def _num(x, fmt: str = ".3f", signed: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, ("+" if signed else "") + fmt)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain, aligned text table."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h)) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _md_cell(x) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _verdict(r: CheckResult) -> str:
    n_unusable, n_reg = len(r.of("unusable")), len(r.of("regression"))
    if r.exit_code == 2:
        return f"UNUSABLE (exit 2): {n_unusable} problem(s) make the baseline not apply to this run" + (
            f"; {n_reg} regression(s) besides" if n_reg else "")
    if r.exit_code == 1:
        return f"FAIL (exit 1): {n_reg} regression(s)"
    return f"PASS (exit 0): {len(r.criteria)} strategy x criterion within tolerance, no case newly fails"


def check_text(r: CheckResult, baseline: str, source_run: str = "") -> str:
    lines = [f"supportbench check: run {r.run} against {baseline}" + (f" (approved from run {source_run})" if source_run else "")]
    for sev, title in (("unusable", "UNUSABLE"), ("regression", "REGRESSIONS"), ("warning", "warnings"), ("note", "notes")):
        fs: list[Finding] = r.of(sev)  # type: ignore[arg-type]
        if not fs:
            continue
        lines += ["", f"{title} ({len(fs)})"]
        shown = fs if sev != "note" else fs[:MAX_NOTES]
        lines += [f"  - {f.message}" for f in shown]
        if len(fs) > len(shown):
            lines.append(f"  ... and {len(fs) - len(shown)} more notes")
    lines += ["", _verdict(r)]
    return "\n".join(lines)


def check_markdown(r: CheckResult, baseline: str, source_run: str = "") -> str:
    icon = {0: "✅", 1: "❌", 2: "⚠️"}[r.exit_code]
    lines = [f"### {icon} supportbench check: {_verdict(r)}", "",
             f"Run `{r.run}` against `{baseline}`" + (f" (approved from run `{source_run}`)." if source_run else ".")]
    for sev, title in (("unusable", "Baseline does not apply"), ("regression", "Regressions"), ("warning", "Warnings")):
        fs = r.of(sev)  # type: ignore[arg-type]
        if fs:
            lines += ["", f"**{title}**", ""]
            lines += [f"- {_md_cell(f.message)}" for f in fs]
    if len(r.criteria):
        changed = r.criteria[(r.criteria["delta"].abs() > EPS) | (r.criteria["pass_rate_delta"].abs() > EPS)]
        rows = [[x.strategy, x.criterion, _num(x.base_mean), _num(x.mean), _num(x.delta, signed=True),
                 _num(x.base_pass_rate, ".1%"), _num(x.pass_rate, ".1%"), _num(x.tolerance)] for x in r.criteria.itertuples()]
        head = ["strategy", "criterion", "baseline mean", "mean", "Δ", "baseline pass", "pass", "tolerance"]
        lines += ["", f"<details><summary>Per-criterion numbers ({len(changed)} of {len(r.criteria)} changed)</summary>", "",
                  _md_table(head, rows), "", "</details>"]
    notes = r.of("note")
    if notes:
        lines += ["", f"<details><summary>Notes ({len(notes)})</summary>", ""]
        lines += [f"- {_md_cell(f.message)}" for f in notes[:MAX_NOTES]]
        if len(notes) > MAX_NOTES:
            lines.append(f"- ... and {len(notes) - MAX_NOTES} more")
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def _criteria_rows(c: CompareResult, only_changed: bool = False):
    df = c.criteria
    if only_changed:
        df = df[(df["delta"].abs() > 1e-6) | (df["pass_rate_delta"].abs() > 1e-6) | df["delta"].isna()]
    return [[x.strategy, x.criterion, _num(x.mean_a), _num(x.mean_b), _num(x.delta, signed=True),
             _num(x.pass_rate_a, ".1%"), _num(x.pass_rate_b, ".1%"), _num(x.pass_rate_delta, signed=True),
             _num(x.n_a, ".0f"), _num(x.n_b, ".0f")] for x in df.itertuples()]


_CRIT_HEAD = ["strategy", "criterion", "mean A", "mean B", "Δ mean", "pass A", "pass B", "Δ pass", "n A", "n B"]


def _flip_line(f) -> str:
    return (f"{f.strategy} · {f.criterion} · {f.case}: {f.status_a} -> {f.status_b}, value {_num(f.value_a)} -> {_num(f.value_b)} "
            f"({_num(f.delta, signed=True)}); B: {f.explanation_b}")


def compare_text(c: CompareResult) -> str:
    lines = [f"supportbench compare: A = {c.a}, B = {c.b} (positive deltas: B is better)", "",
             _table(_CRIT_HEAD, _criteria_rows(c))]
    reg, imp = c.regressions, c.improvements
    lines += ["", f"flipped cases: {len(reg)} regression(s) (pass -> fail), {len(imp)} improvement(s) (fail -> pass)"]
    if len(reg):
        lines += ["", "regressions, worst first:"] + [f"  - {_flip_line(f)}" for f in reg.itertuples()]
    if len(imp):
        lines += ["", "improvements:"] + [f"  + {_flip_line(f)}" for f in imp.itertuples()]
    if len(c.one_sided):
        counts = c.one_sided.groupby("side").size().to_dict()
        lines += ["", f"cases on one side only: {counts.get('a', 0)} only in A, {counts.get('b', 0)} only in B"]
    return "\n".join(lines)


def compare_markdown(c: CompareResult) -> str:
    reg, imp = c.regressions, c.improvements
    icon = "❌" if len(reg) else "✅"
    lines = [f"### {icon} supportbench compare: {len(reg)} regression(s), {len(imp)} improvement(s)", "",
             f"A = `{c.a}`, B = `{c.b}`; positive deltas mean B is better.", ""]
    changed = _criteria_rows(c, only_changed=True)
    if changed:
        lines += ["**Criteria that changed**", "", _md_table(_CRIT_HEAD, changed), ""]
    else:
        lines += ["No criterion changed.", ""]
    for title, df in (("Regressions (pass → fail), worst first", reg), ("Improvements (fail → pass)", imp)):
        if len(df):
            rows = [[f.strategy, f.criterion, f.case, f"{f.status_a} → {f.status_b}", _num(f.delta, signed=True), f.explanation_b]
                    for f in df.head(MAX_FLIPS_MD).itertuples()]
            lines += [f"**{title}**", "", _md_table(["strategy", "criterion", "case", "status", "Δ value", "B says"], rows)]
            if len(df) > MAX_FLIPS_MD:
                lines.append(f"\n... and {len(df) - MAX_FLIPS_MD} more")
            lines.append("")
    lines += ["<details><summary>All criteria</summary>", "", _md_table(_CRIT_HEAD, _criteria_rows(c)), "", "</details>"]
    if len(c.one_sided):
        counts = c.one_sided.groupby("side").size().to_dict()
        lines += ["", f"Cases on one side only: {counts.get('a', 0)} only in A, {counts.get('b', 0)} only in B."]
    return "\n".join(lines) + "\n"
