"""The stats panel's tabs: the built-in ones, in tab order, and the registry a new tab joins.

A tab is a :class:`~viewer.stats_tabs.StatsTab` (its description, compute and row action,
in one module); :func:`register_tab` adds it after those registered, and the panel and
the controller that :func:`app.stats_controller.install_stats_panel` makes show and run
every registered tab.
"""

from __future__ import annotations

from strata.app.stats_collectives import COLLECTIVES, COLLECTIVES_TAB
from strata.app.stats_diff import DIFF, DIFF_TAB
from strata.app.stats_expert import EXPERT, EXPERT_TAB
from strata.app.stats_ops import OPS, OPS_TAB
from strata.app.stats_outliers import OUTLIERS
from strata.viewer.outliers_view import OUTLIERS_TAB
from strata.viewer.stats_tabs import SUMMARY_TABS, StatsTab

__all__ = [
    "BUILTIN_TABS",
    "COLLECTIVES_TAB",
    "DIFF_TAB",
    "EXPERT_TAB",
    "OPS_TAB",
    "OUTLIERS_TAB",
    "TABS",
    "register_tab",
    "stats_tabs",
    "unregister_tab",
]

_TABS: dict[str, StatsTab] = {}


def register_tab(tab: StatsTab) -> StatsTab:
    """Add ``tab`` after the tabs registered (a panel installed from now on shows it);
    return it.

    Raises
    ------
    ValueError
        A tab of that id is registered already.
    """
    if tab.id in _TABS:
        raise ValueError(f"a stats tab {tab.id!r} is registered already")
    _TABS[tab.id] = tab
    return tab


def unregister_tab(tab_id: str) -> None:
    """Remove the tab ``tab_id`` (a no-op when absent)."""
    _TABS.pop(tab_id, None)


def stats_tabs() -> tuple[StatsTab, ...]:
    """Return every registered tab, in registration (tab) order."""
    return tuple(_TABS.values())


for _tab in (*SUMMARY_TABS, OUTLIERS, EXPERT, COLLECTIVES, OPS, DIFF):
    register_tab(_tab)

#: The built-in tabs, in tab order.
BUILTIN_TABS = stats_tabs()
#: (id, title) of :data:`BUILTIN_TABS`.
TABS = tuple((tab.id, tab.title) for tab in BUILTIN_TABS)
