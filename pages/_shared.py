"""What every page shares: the selected run, cached queries, and widgets whose value lives in the URL.

Selections are written to `st.query_params` on every run and read back from it when a widget
first appears, so a copied link reproduces what someone saw. Queries go through
`harness.analysis.queries` behind `st.cache_data`, keyed on the run ids and the parameters (runs
never change once written, so a cached answer never goes stale).
"""

from __future__ import annotations

import importlib
import logging
import math
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

import streamlit as st

from harness.analysis import queries
from harness.analysis.results import Results, list_runs, resolve_run, runs_root
from harness.analysis.visible import for_display
from stores.redaction import ScrubFilter
from harness.run.runstore import read_manifest
from pages._views import page as view_page

PAGE_SIZE = 25
log = logging.getLogger("supportbench.app")
log.addFilter(ScrubFilter())  # what the app logs (an export's traceback) holds no secret

BAND_COLORS = {"healthy": "#2e7d32", "watch": "#f9a825", "at_risk": "#c62828"}
STATUS_ICONS = {"ok": "✓", "fail": "✗", "error": "‼", "unsupported": "–"}
"""Plain symbols, not emoji: they render in every font, headless browsers included."""


# --- routing ---------------------------------------------------------------------------------

CURRENT_PAGE = "router_page"
"""Session-state key where the router (`pages/_router.py`) records the URL path of the page it is about to run."""


# --- runs and queries ------------------------------------------------------------------------


def root() -> str:
    return str(runs_root().resolve())


def run_ids() -> list[str]:
    """Complete runs under the runs folder, newest first (not cached: a new run shows at once)."""
    return list(run_labels())


def run_labels() -> dict[str, str]:
    """Complete runs, newest first, each with what a run picker shows for it (`run_label`); one
    scan of the runs folder (not cached: a new run shows at once)."""
    return {r.run_id: run_label(r.run_id, r.manifest) for r in list_runs()}


def run_manifests() -> dict[str, dict]:
    """Complete runs' manifests by run id, newest first (one scan of the runs folder)."""
    return {r.run_id: r.manifest for r in list_runs()}


def run_label(run_id: str, manifest: dict) -> str:
    """How a picker names a run: the name it was given (`supportbench run --name`) or its id, then
    its suite(s), so two runs of different suites are told apart before they are compared."""
    suites = ", ".join(sorted({str(d.get("suite", "?")) for d in manifest.get("datasets", [])})) or "no suite"
    name = str(manifest.get("name") or "").strip()
    return f"{name} · {suites} ({run_id})" if name else f"{run_id} · {suites}"


def current_run() -> str | None:
    """The run chosen in the sidebar (the app's router puts it in the URL before any page renders)."""
    picked = st.session_state.get("qp_run")
    if picked is not None:
        # the router's picker, drawn earlier in this same script run, only holds a run it just
        # listed: no second scan of the runs folder (and its manifests) for every query
        return picked
    ids = run_ids()
    rid = st.query_params.get("run")
    return rid if rid in ids else (ids[0] if ids else None)


def analysis(name: str) -> Callable[..., Any]:
    """The read function a page names: `"leaderboard"` is `harness.analysis.queries.leaderboard`,
    `"failures.page"` is `harness.analysis.failures.page` (a module of `harness.analysis`)."""
    module, _, fn = name.rpartition(".")
    return getattr(importlib.import_module(f"harness.analysis.{module}") if module else queries, fn)


@st.cache_data(show_spinner=False, max_entries=512)
def query(name: str, runs: tuple[str, ...], root_dir: str, *args: Any, **kwargs: Any) -> Any:
    """`analysis(name)(Results(runs), *args, **kwargs)`, cached by run ids and parameters, as the
    app shows it (`harness.analysis.visible.for_display`: secrets scrubbed, control and
    bidirectional characters visibly escaped)."""
    with Results([resolve_run(r, root_dir) for r in runs]) as res:
        return for_display(analysis(name)(res, *args, **kwargs))


def q(name: str, *args: Any, run: str | None = None, **kwargs: Any) -> Any:
    """A cached query on the current run (or `run`)."""
    return query(name, (run or current_run(),), root(), *args, **kwargs)


def deferred_export(name: str, fmt: str, *args: Any, run: str | None = None, **kwargs: Any) -> Callable[[], bytes]:
    """A download button's deferred data: `analysis(name)(Results(run), path, fmt, *args, **kwargs)`
    writes the file (DuckDB streams it, `harness.analysis.failures.export`) when the reader clicks,
    not on every rerun, and its bytes are handed over once."""
    run, root_dir = run or current_run(), root()

    def build() -> bytes:
        try:
            with tempfile.TemporaryDirectory(prefix="sb-export-") as d, Results(resolve_run(run, root_dir)) as res:
                path = Path(d) / f"export.{fmt}"
                analysis(name)(res, path, fmt, *args, **kwargs)
                return path.read_bytes()
        except Exception:  # runs outside the page's guard: the reader gets a sentence, the log the traceback
            log.exception("export %s of run %s failed", fmt, run)
            raise RuntimeError(f"The {fmt.upper()} export could not be written; the details are in the app's log.") from None

    return build


@st.cache_data(show_spinner=False, max_entries=64)
def manifest(run: str, root_dir: str) -> dict:
    return read_manifest(resolve_run(run, root_dir))


def run_summary(run: str) -> None:
    """A caption under the run picker: what the run holds."""
    m = manifest(run, root())
    counts = m.get("counts", {})
    names = [s["label"] for s in m.get("strategies", [])]
    suites = ", ".join(sorted({str(d.get("suite", "?")) for d in m.get("datasets", [])}))
    named = f"**{m['name']}** · " if m.get("name") else ""
    policies = len(m.get("policies", []))
    st.caption(f"{named}`{run}` · suite {suites or '?'} · {counts.get('scenarios', '?')} scenarios · "
               f"{counts.get('probes', '?')} probes · {len(names)} strategies"
               f"{f' · {policies} decision policies' if policies else ''} · started "
               f"{m.get('started', '')[:16].replace('T', ' ')} UTC")


def missing_run(wanted: str, labels: dict[str, str], damaged: Sequence[Any] = ()) -> None:
    """The page shown for a link to a run that is not in the runs folder (or is damaged): say so,
    and offer the runs that are (showing another run under the link's name would mislead whoever
    shared it)."""
    st.title("Run not found")
    broken = next((r for r in damaged if r.run_id == wanted), None)
    if broken is not None:
        st.error(f"The link asks for run `{wanted}`, which is damaged and cannot be read: {broken.problem}. "
                 "Nothing of another run is shown in its place.", icon=":material/search_off:")
    else:
        # the run only: the folder's absolute path is this machine's business, not a visitor's
        st.error(f"The link asks for run `{wanted}`, which is not in the runs folder. It may have been "
                 "deleted, renamed, or written on another machine. Nothing of another run is shown in its place.",
                 icon=":material/search_off:")
    pick = st.selectbox(f"Open one of the {len(labels)} runs that exist", list(labels), index=None,
                        format_func=labels.get, placeholder="choose a run", key="missing_run_pick")
    if pick:
        st.session_state.pop("qp_run", None)
        st.query_params["run"] = pick
        st.rerun()


# --- widgets bound to the URL ------------------------------------------------------------------


def wkey(param: str) -> str:
    """The widget key of a URL parameter: one per page (so a link's values win on arrival), except
    the run, which the sidebar keeps across pages."""
    if param == "run":
        return "qp_run"
    return f"qp_{st.session_state.get(CURRENT_PAGE, '')}_{param}"


def _arrived(key: str, url: Any) -> bool:
    """True when the URL holds a value this session did not write: a link was opened or another
    page sent the reader here with a selection. Then the URL wins over the widget's state."""
    return url not in (None, [], "") and url != st.session_state.get(key + "__url")


def _wrote(key: str, param: str, value: Any, default: Any = None) -> None:
    """Put the widget's value in the URL (dropped when it equals `default`) and remember it."""
    st.session_state[key + "__url"] = value
    if value in (None, [], "") or value == default:
        st.query_params.pop(param, None)
    else:
        st.query_params[param] = value


def url_selectbox(label: str, options: Sequence[Any], param: str, *, default: Any = None,
                  format_func: Callable[[Any], str] = str, where=st, **kw) -> Any:
    """A selectbox whose value is `?param=` in the URL."""
    options = list(options)
    key = wkey(param)
    if not options:
        st.query_params.pop(param, None)
        return None
    url = st.query_params.get(param)
    if (_arrived(key, url) and url in options) or key not in st.session_state or st.session_state[key] not in options:
        st.session_state[key] = url if url in options else (default if default in options else options[0])
    value = where.selectbox(label, options, key=key, format_func=format_func, **kw)
    _wrote(key, param, str(value))
    return value


def url_multiselect(label: str, options: Sequence[str], param: str, *, default: Sequence[str] = (),
                    where=st, **kw) -> list[str]:
    """A multiselect whose values are repeated `?param=` entries in the URL."""
    options = list(options)
    key = wkey(param)
    url = [v for v in st.query_params.get_all(param) if v in options]
    if _arrived(key, url) or key not in st.session_state or any(v not in options for v in st.session_state[key]):
        st.session_state[key] = url if url else [d for d in default if d in options]
    value = list(where.multiselect(label, options, key=key, **kw))
    _wrote(key, param, value)
    return value


def url_toggle(label: str, param: str, *, default: bool = False, where=st, **kw) -> bool:
    key = wkey(param)
    raw = st.query_params.get(param)
    url = None if raw is None else raw.lower() in ("1", "true", "yes", "on")
    if (url is not None and url != st.session_state.get(key + "__url")) or key not in st.session_state:
        st.session_state[key] = default if url is None else url
    value = bool(where.toggle(label, key=key, **kw))
    st.session_state[key + "__url"] = value
    if value != default:
        st.query_params[param] = "1" if value else "0"
    else:
        st.query_params.pop(param, None)
    return value


def url_text(label: str, param: str, *, where=st, **kw) -> str:
    key = wkey(param)
    url = st.query_params.get(param, "")
    if _arrived(key, url) or key not in st.session_state:
        st.session_state[key] = url
    value = where.text_input(label, key=key, **kw).strip()
    _wrote(key, param, value)
    return value


def url_seed(param: str, options: Sequence[Any], default: Any, parse: Callable[[str], Any] = str) -> str:
    """For a widget the helpers above do not cover: put `?param=` (parsed) into its state when a
    link brings a value, or the default when its state is not one of `options`; returns its key.
    Call `url_keep` with the widget's value once it is drawn."""
    key = wkey(param)
    raw = st.query_params.get(param)
    try:
        url = None if raw is None else parse(raw)
    except ValueError:
        url = None
    if (url in options and url != st.session_state.get(key + "__url")) or st.session_state.get(key) not in options:
        st.session_state[key] = url if url in options else default
    return key


def url_keep(param: str, value: Any) -> None:
    """Put a `url_seed` widget's value in the URL (always, default included) and remember it."""
    st.query_params[param] = str(value)
    st.session_state[wkey(param) + "__url"] = value


def url_pagination(total: int, param: str = "page", *, page_size: int = PAGE_SIZE, where=st) -> tuple[int, int]:
    """Page controls when there is more than one page; returns (limit, offset)."""
    pages = max(1, math.ceil(total / page_size))
    key = wkey(param)
    try:
        url = int(st.query_params.get(param, 0))
    except ValueError:
        url = 0
    start = url if 1 <= url <= pages else 1
    # The page count is part of the key: new filters start again at the URL's page (or 1).
    page = int(where.pagination(pages, default=start, key=f"{key}_{pages}")) if pages > 1 else 1
    st.session_state[key + "__url"] = page
    if page > 1:
        st.query_params[param] = str(page)
    else:
        st.query_params.pop(param, None)
    return page_size, (page - 1) * page_size


def clear_params(*params: str) -> None:
    """Forget selections (URL and widget state) that depend on a choice that just changed."""
    for p in params:
        st.query_params.pop(p, None)
        st.session_state.pop(wkey(p), None)
        st.session_state.pop(wkey(p) + "__url", None)


CASE_SEP = "|"


def case_key(strategy: str, scenario: str, probe_id: str | None, criterion: str) -> str:
    """The `?case=` value that opens one case on the Failures page (read it with `parse_case`)."""
    return CASE_SEP.join([strategy, scenario, probe_id or "", criterion])


def parse_case(value: object) -> tuple[str, str, str, str] | None:
    """(strategy, scenario, probe id, criterion) of a `case_key`, None when `value` is not one
    (a hand-edited or truncated link)."""
    parts = value.split(CASE_SEP) if isinstance(value, str) else []
    if len(parts) != 4 or not all((parts[0], parts[1], parts[3])):
        return None
    return parts[0], parts[1], parts[2], parts[3]


def go(page: str, **params: Any) -> None:
    """Open the page registered under the URL path `page` (see pages/_views.py) with its selection in the
    URL (the run is carried along)."""
    qp = {"run": current_run(), **{k: v for k, v in params.items() if v not in (None, "", [])}}
    st.switch_page(view_page(page), query_params=qp)


def scenario_select(where=st) -> str | None:
    """The scenario picker (`?scenario=`), each scenario shown with its title."""
    scen = q("scenarios")
    titles = dict(zip(scen["scenario"], scen["title"]))
    return url_selectbox("Scenario", list(scen["scenario"]), "scenario", where=where,
                         format_func=lambda s: f"{s} — {titles.get(s, '')}")


# --- small display helpers -----------------------------------------------------------------------


def start(title: str) -> str | None:
    """Open a page: title it and return the current run (None, after telling the reader there is
    nothing to show yet, when there is no run: the page should stop)."""
    st.title(title)
    run = current_run()
    if run is None:
        st.info("No run yet. Open **Get started** to run the canonical suite.")
    return run


def pct(x: float | None) -> str:
    """A share as a whole percentage, '–' when missing."""
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.0%}"


def criterion_titles(run: str | None = None) -> dict[str, str]:
    meta = q("criteria_meta", run=run)
    return dict(zip(meta["criterion"], meta["title"]))


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()
