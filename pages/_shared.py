"""What every page shares: the selected run, cached queries, and widgets whose value lives in the URL.

Selections are staged while a page draws and sent to the URL once at its end (one history entry
per thing the reader did, see `url_page`), and read back from it when the reader arrives (a link,
another page, Back or Forward), so a copied link reproduces what someone saw. Queries go through
`harness.analysis.queries` behind `st.cache_data`, keyed on the run ids and the parameters (runs
never change once written, so a cached answer never goes stale).
"""

from __future__ import annotations

import functools
import json
import importlib
import logging
import math
import re
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence
from urllib.parse import urlencode

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
LISTED_RUNS = "router_runs"
"""Session-state key where the router records the runs it listed in this script run (id -> label)."""


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


def listed_runs() -> dict[str, str]:
    """The runs the router listed in this script run (id -> label), or a scan when it listed none."""
    return st.session_state.get(LISTED_RUNS) or run_labels()


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
    named = f"**{plain(m['name'])}** · " if m.get("name") else ""
    policies = len(m.get("policies", []))
    st.caption(f"{named}{code(run)} · suite {plain(suites or '?')} · {counts.get('scenarios', '?')} scenarios · "
               f"{probe_count(counts)} · {len(names)} strategies"
               f"{f' · {policies} decision policies' if policies else ''} · started "
               f"{m.get('started', '')[:16].replace('T', ' ')} UTC")


def probe_count(counts: dict) -> str:
    """The run's probes in words: the manifest counts a probe once per strategy that answered it."""
    answers, strategies = counts.get("probes"), counts.get("strategies")
    if not isinstance(answers, int) or not isinstance(strategies, int) or strategies < 1:
        return f"{answers if answers is not None else '?'} probe answers"
    if answers % strategies:
        return f"{answers:,} probe answers"
    return f"{answers // strategies:,} probes × {strategies} strategies = {answers:,} probe answers"


def missing_run(wanted: str, labels: dict[str, str], damaged: Sequence[Any] = ()) -> None:
    """The page shown for a link to a run that is not in the runs folder (or is damaged): say so,
    and offer the runs that are (showing another run under the link's name would mislead whoever
    shared it)."""
    st.title("Run not found")
    broken = next((r for r in damaged if r.run_id == wanted), None)
    if broken is not None:
        st.error(f"The link asks for run {code(wanted)}, which is damaged and cannot be read: {plain(broken.problem)}. "
                 "Nothing of another run is shown in its place.", icon=":material/search_off:")
    else:
        # the run only: the folder's absolute path is this machine's business, not a visitor's
        st.error(f"The link asks for run {code(wanted)}, which is not in the runs folder. It may have been "
                 "deleted, renamed, or written on another machine. Nothing of another run is shown in its place.",
                 icon=":material/search_off:")
    pick = st.selectbox(f"Open one of the {len(labels)} runs that exist", list(labels), index=None,
                        format_func=labels.get, placeholder="choose a run", key="missing_run_pick")
    if pick:
        st.session_state.pop("qp_run", None)
        st.query_params["run"] = pick
        st.rerun()


# --- the URL: one history entry per reader's action ------------------------------------------------

# Streamlit pushes a browser history entry for every change of the query string it is sent, so a
# page that writes its selections one by one (and defaults while its widgets appear) would push
# several per click, and Back would walk those instead of the pages the reader saw. So selections
# are staged silently while a page draws and the URL is sent once, at the end, when it differs
# from what the browser shows (`url_page`). And a page entered by a link, another page or
# Back/Forward takes its whole selection from the URL (a missing parameter is the default), never
# from what its widgets held the last time it was shown: going Back never reopens a closed case.

URL_SHOWN = "_url_shown"
"""Session-state key: (page, query) the app last left in the browser's address bar."""
ARRIVING = "_url_arriving"
"""Session-state key: True while a page drawn for a link, another page or Back/Forward renders."""
VISITS = "_url_visits"
"""Session-state key: how many times a page was entered (fresh keys for click-to-open tables)."""
STAGED = "_url_staged"
"""Session-state key: the query the page is writing (while it draws), sent by `flush_url`."""


def _query_now() -> dict[str, tuple[str, ...]]:
    """The query parameters the browser shows (as this script run received or last sent them)."""
    return {k: tuple(st.query_params.get_all(k)) for k in st.query_params}


def param_all(param: str) -> list[str]:
    """Every value of `?param=`, as staged so far while the page draws (else as the browser shows it)."""
    staged = st.session_state.get(STAGED)
    return list(staged.get(param, ())) if staged is not None else st.query_params.get_all(param)


def param_get(param: str, default: Any = None) -> Any:
    """The last value of `?param=` (like `st.query_params.get`), as staged so far."""
    values = param_all(param)
    return values[-1] if values else default


def _stage(param: str, value: Any) -> None:
    """Set (a str or a list) or drop (None) one URL parameter without telling the browser yet; the
    run (the router's picker, drawn before any page) and writes outside a page go straight out."""
    staged = st.session_state.get(STAGED)
    if staged is None or param == "run":
        if value is None:
            st.query_params.pop(param, None)
        else:
            st.query_params[param] = value
        if staged is None:
            return
    if value is None:
        staged.pop(param, None)
    else:
        staged[param] = tuple(str(v) for v in value) if isinstance(value, (list, tuple)) else (str(value),)


def set_param(param: str, value: Any) -> None:
    """Stage `?param=value` (a list: repeated); the browser hears of it at the end of the page."""
    _stage(param, value)


def drop_param(param: str) -> None:
    """Stage the removal of `?param=`."""
    _stage(param, None)


def flush_url() -> None:
    """Send the staged URL to the browser: one history entry, and none when it shows this already."""
    want = st.session_state.get(STAGED)
    if want is None:
        return
    want = {k: v for k, v in want.items() if v}
    if want != _query_now():
        st.query_params.from_dict({k: list(v) for k, v in want.items()})
    st.session_state[URL_SHOWN] = (st.session_state.get(CURRENT_PAGE, ""), want)


def arriving() -> bool:
    """True while the page is drawn for a link, another page or Back/Forward (the URL wins)."""
    return bool(st.session_state.get(ARRIVING, True))


def visit_key(name: str) -> str:
    """A widget key that is new on every arrival at the page: a click-to-open table drawn after Back
    starts with nothing selected (a stale selection would open its row again)."""
    return f"{name}__{st.session_state.get(VISITS, 0)}"


def url_page(render: Callable[[], None]) -> Callable[[], None]:
    """Wrap a page's `render`: decide whether the reader arrived (the URL differs from the one the
    app last showed: a link, another page, Back or Forward; the URL wins) or acted on the page
    (widgets win), draw it, then send the URL once. A page that raises or switches page sends
    nothing: the next page says where the reader is."""

    @functools.wraps(render)
    def page() -> None:
        here = (st.session_state.get(CURRENT_PAGE, ""), _query_now())
        arrived = st.session_state.get(URL_SHOWN) != here
        st.session_state[ARRIVING] = arrived
        if arrived:
            st.session_state[VISITS] = st.session_state.get(VISITS, 0) + 1
        st.session_state[STAGED] = dict(here[1])
        try:
            render()
            st.session_state[ARRIVING] = False
            flush_url()
        finally:
            st.session_state.pop(STAGED, None)

    return page


def url_fragment(body: Callable[..., None]) -> Callable[..., None]:
    """`st.fragment` for a part of a page whose widgets rerun only that part: a rerun of it alone is
    the reader acting on the page, and it sends its URL changes once, at its end."""

    @functools.wraps(body)
    def part(*args: Any, **kwargs: Any) -> None:
        if st.session_state.get(STAGED) is not None:  # drawn by the whole page: the page sends the URL
            body(*args, **kwargs)
            return
        st.session_state[ARRIVING] = False
        st.session_state[STAGED] = _query_now()
        try:
            body(*args, **kwargs)
            flush_url()
        finally:
            st.session_state.pop(STAGED, None)

    return st.fragment(part)


def rerun() -> None:
    """`st.rerun()` after sending the staged URL (a rerun starts from what the browser shows)."""
    flush_url()
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
    """Put the widget's value in the URL and remember it. The `default` is not added (a page
    arrived at adds no history entry by writing its defaults), but a link that names it keeps it."""
    st.session_state[key + "__url"] = value
    if value in (None, [], ""):
        drop_param(param)
    elif value != default or param_all(param):
        set_param(param, value)


def unknown_in_link(param: str, values: Sequence[Any], what: str, where=st) -> None:
    """Say that a link named values this page does not have (they are not silently dropped)."""
    if values:
        shown = ", ".join(f"“{plain(str(v)[:60])}”" for v in values[:5]) + (" …" if len(values) > 5 else "")
        where.warning(f"The link's {plain(what)} ({param}=) names {shown}, which this run does not have: "
                      f"{'left out' if what.endswith('s') else 'showing the default instead'}.", icon=":material/link_off:")


def url_selectbox(label: str, options: Sequence[Any], param: str, *, default: Any = None,
                  format_func: Callable[[Any], str] = str, where=st, **kw) -> Any:
    """A selectbox whose value is `?param=` in the URL."""
    options = list(options)
    key = wkey(param)
    if not options:
        drop_param(param)
        return None
    url = param_get(param)
    texts = {str(o): o for o in options}
    url = texts.get(url, url)
    fallback = default if default in options else options[0]  # what the page shows when the URL names nothing
    came = arriving() and param != "run"
    if came or (_arrived(key, url) and url in options) or key not in st.session_state or st.session_state[key] not in options:
        st.session_state[key] = url if url in options else fallback
    if came and url not in (None, "") and url not in options:
        unknown_in_link(param, [url], label.lower(), where=st)
    value = where.selectbox(label, options, key=key, format_func=format_func, **kw)
    _wrote(key, param, str(value), default=str(fallback))  # a default stays out of the URL: arriving adds no entry
    return value


def url_multiselect(label: str, options: Sequence[str], param: str, *, default: Sequence[str] = (),
                    where=st, **kw) -> list[str]:
    """A multiselect whose values are repeated `?param=` entries in the URL."""
    options = list(options)
    key = wkey(param)
    given = param_all(param)
    url = [v for v in given if v in options]
    if arriving() or _arrived(key, url) or key not in st.session_state or any(v not in options for v in st.session_state[key]):
        st.session_state[key] = url if url else [d for d in default if d in options]
        if arriving():
            unknown_in_link(param, [v for v in given if v not in options], f"{label.lower()}s", where=st)
    value = list(where.multiselect(label, options, key=key, **kw))
    _wrote(key, param, value, default=[d for d in default if d in options] or None)
    return value


def url_toggle(label: str, param: str, *, default: bool = False, where=st, **kw) -> bool:
    key = wkey(param)
    raw = param_get(param)
    url = None if raw is None else raw.lower() in ("1", "true", "yes", "on")
    if arriving() or (url is not None and url != st.session_state.get(key + "__url")) or key not in st.session_state:
        st.session_state[key] = default if url is None else url
    value = bool(where.toggle(label, key=key, **kw))
    st.session_state[key + "__url"] = value
    if value != default:
        set_param(param, "1" if value else "0")
    else:
        drop_param(param)
    return value


def url_text(label: str, param: str, *, where=st, **kw) -> str:
    key = wkey(param)
    url = param_get(param, "")
    if arriving() or _arrived(key, url) or key not in st.session_state:
        st.session_state[key] = url
    value = where.text_input(label, key=key, **kw).strip()
    _wrote(key, param, value)
    return value


def url_seed(param: str, options: Sequence[Any], default: Any, parse: Callable[[str], Any] = str) -> str:
    """For a widget the helpers above do not cover: put `?param=` (parsed) into its state when a
    link brings a value, or the default when its state is not one of `options`; returns its key.
    Call `url_keep` with the widget's value once it is drawn."""
    key = wkey(param)
    raw = param_get(param)
    try:
        url = None if raw is None else parse(raw)
    except ValueError:
        url = None
    if arriving() or (url in options and url != st.session_state.get(key + "__url")) or st.session_state.get(key) not in options:
        st.session_state[key] = url if url in options else default
    return key


def url_keep(param: str, value: Any, default: Any = None) -> None:
    """Put a `url_seed` widget's value in the URL (left out when it is `default`) and remember it."""
    if default is None or value != default or param_all(param):
        set_param(param, str(value))
    st.session_state[wkey(param) + "__url"] = value


def url_pagination(total: int, param: str = "page", *, page_size: int = PAGE_SIZE, where=st) -> tuple[int, int]:
    """Page controls when there is more than one page; returns (limit, offset)."""
    pages = max(1, math.ceil(total / page_size))
    key = wkey(param)
    try:
        url = int(param_get(param, 0))
    except ValueError:
        url = 0
    start = url if 1 <= url <= pages else 1
    # The page count is part of the key: new filters start again at the URL's page (or 1).
    wk = f"{key}_{pages}"
    goto = st.session_state.pop(key + "__goto", None)  # a page another control asked for (next case)
    if isinstance(goto, int) and 1 <= goto <= pages:
        start = goto
    if arriving() or goto is not None:
        st.session_state.pop(wk, None)  # the URL's (or asked) page, its `default`, not the one last shown
    page = int(where.pagination(pages, default=start, key=wk)) if pages > 1 else 1
    st.session_state[key + "__url"] = page
    if page > 1:
        set_param(param, str(page))
    else:
        drop_param(param)
    return page_size, (page - 1) * page_size


def clear_params(*params: str) -> None:
    """Forget selections (URL and widget state) that depend on a choice that just changed."""
    for p in params:
        drop_param(p)
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
    target = view_page(page)
    if st.session_state.get(STAGED) is None:  # outside a page (a test of the router): Streamlit's own switch
        st.switch_page(target, query_params=qp)
    # `st.switch_page` would push two history entries (the new query on the old page's path, then the
    # new path), so Back from the new page would land on the old page holding the new page's
    # selection. The browser is asked instead to do what a click on a link to the page does: one
    # entry for the new address, which Streamlit's router then runs (its handler of Back/Forward).
    # The script holds only the app's own address, JSON-encoded: no data is ever markup here.
    st.session_state.pop(STAGED, None)  # the new page sends its own URL
    open_address(f"./{target.url_path}?{urlencode(qp, doseq=True)}")


def open_address(address: str, *, replace: bool = False) -> None:
    """Ask the browser to open `address` (one of the app's own, relative to its base) as a click on
    a link to it does, and stop this script run: Streamlit's router runs the page for it (its
    handler of Back/Forward). With `replace`, the address takes the place of the current history
    entry instead of adding one (an address that only completes the one the reader asked for).
    The script holds only the app's own address, JSON-encoded: no data is ever markup here."""
    how = "replaceState" if replace else "pushState"
    st.html("<script>(() => { const to = new URL(" + json.dumps(address) + ", document.baseURI);"
            f" history.{how}({{}}, '', to); dispatchEvent(new PopStateEvent('popstate')); }})()</script>",
            unsafe_allow_javascript=True)
    st.stop()


def name_the_run(run: str) -> None:
    """Put `?run=` into an address that lacks it (a bare `/`, a page the sidebar opened) in place:
    Streamlit pushes a history entry for every change of the query string a script run sends, so
    writing the run from here would give one visit two entries, and Back would walk to the bare
    address, which reopens the newest run. The browser is asked instead to replace its address
    with the same one naming the run, and Streamlit's router runs that (a rerun started by
    Back/Forward sends its URL changes in place too)."""
    st.html("<script>(() => { const to = new URL(location.href); to.searchParams.set('run', " + json.dumps(run).replace("<", "\\u003c") + ");"
            " history.replaceState({}, '', to); dispatchEvent(new PopStateEvent('popstate')); })()</script>",
            unsafe_allow_javascript=True)
    st.stop()


def scenario_select(where=st) -> str | None:
    """The scenario picker (`?scenario=`), each scenario shown with its title."""
    scen = q("scenarios")
    titles = dict(zip(scen["scenario"], scen["title"]))
    return url_selectbox("Scenario", list(scen["scenario"]), "scenario", where=where,
                         format_func=lambda s: f"{s} — {titles.get(s, '')}")


# --- data as text -------------------------------------------------------------------------------

# Scenario files, run names and a remote service's memories are untrusted: a turn reading
# `![x](http://elsewhere/p.png)` drawn as Markdown makes the reviewer's browser fetch it, a link in
# it is clickable and `:red[...]` is styled. Every piece of data that goes into Markdown (a text,
# a caption, an alert, a title, a widget or expander label) goes through `plain` or `code` first;
# tables, charts' values and `st.code` show text as it is.

_MARKUP = re.compile(r"([!-/:-@\[-`{-~])")
"""Every ASCII punctuation character: CommonMark lets a backslash make each one literal, which
defeats images, links, autolinks (`http\\://`), emphasis, HTML, Streamlit's `:color[...]`
directives, icons and emoji shortcodes, and `$` maths."""


WORD_JOINER = "\u2060"
"""An invisible character that breaks an address in data: Streamlit's Markdown turns any text that
reads `http://…`, `www.…` or `name@host.tld` into a link after the escapes are read, so such text
gets this character after its `:` (before `//`), its `www` and before its `@`."""
_ADDRESS = re.compile(r"(:)(?=//)|(?i:(\bwww))(?=\.)|(?=@)")


def plain(value: Any) -> str:
    """`value` as literal text inside Markdown (every punctuation character escaped, addresses
    broken by an invisible character so they are not made links; line breaks kept)."""
    text = "" if value is None else str(value)
    text = _ADDRESS.sub(lambda m: (m.group(0) or "") + WORD_JOINER, text)
    return _MARKUP.sub(r"\\\1", text).replace("\n", "  \n")


def code(value: Any) -> str:
    """`value` as an inline code span, whatever backticks it holds (a fence longer than any run of
    them inside); code spans show their text literally."""
    text = ("" if value is None else str(value)).replace("\n", " ")
    runs = [len(m) for m in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


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
