"""The app's view table: every page declared once, by its URL path, title and icon.

A view's URL path is its module's file name (`/failures` is `pages/failures.py`, whose `render()`
draws it): that is the file a fresh server runs for the link, and `tests/app/test_router.py` holds
every view to it. The page module is imported when its view is drawn, so this table imports no
page and every page may import it (through `go()` in `pages._shared`) without a circle. The router
(`pages/_router.py`) hands the views to `st.navigation`.

Adding a page: write `pages/<name>.py` with a `render()` that opens with `start(title)` and ends
with the guard every page module has, then add one `View` line to `VIEWS`:

    if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
        from pages._router import hand_over

        hand_over()
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

import streamlit as st


@dataclass(frozen=True)
class View:
    """One page of the app, as the router registers it."""

    url_path: str
    """The page's path in links (`/<url_path>?...`), its name for `go()` and the widget keys, and
    the file name of its module under `pages/`."""
    title: str
    """Its name in the navigation and the browser tab."""
    icon: str
    """A Material icon (`:material/<name>:`)."""

    @property
    def render(self) -> Callable[[], None]:
        """The function that draws the page: `render` of `pages.<url_path>`."""
        return importlib.import_module(f"pages.{self.url_path}").render


VIEWS: tuple[View, ...] = (
    View("leaderboard", "Leaderboard", ":material/leaderboard:"),
    View("rankings", "Rankings per turn", ":material/format_list_numbered:"),
    View("health", "Health", ":material/monitor_heart:"),
    View("failures", "Failures", ":material/report:"),
    View("compare", "Compare runs", ":material/compare_arrows:"),
    View("trends", "Distributions and trends", ":material/insights:"),
    View("decisions", "Decisions", ":material/alt_route:"),
    View("glossary", "Glossary", ":material/menu_book:"),
)
"""The pages shown when there is a run; the first is the default (the app's root URL)."""

GET_STARTED = View("get_started", "Get started", ":material/play_circle:")
"""The only page while there is no run."""


def view(url_path: str) -> View:
    """The view registered under `url_path` (KeyError naming the known ones when there is none)."""
    for v in (*VIEWS, GET_STARTED):
        if v.url_path == url_path:
            return v
    raise KeyError(f"no page {url_path!r}; known: {', '.join(v.url_path for v in (*VIEWS, GET_STARTED))}")


def page(url_path: str) -> st.Page:
    """A fresh `st.Page` for the view at `url_path` (what `st.navigation` and `st.switch_page` take).

    The default view (the first of `VIEWS`, or Get started) answers the root URL; its own path is
    served by the router's alias."""
    v = view(url_path)
    default = v is VIEWS[0] or v is GET_STARTED
    return st.Page(v.render, title=v.title, icon=v.icon, url_path="" if default else v.url_path, default=default)


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()
