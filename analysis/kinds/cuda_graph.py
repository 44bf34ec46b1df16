"""CUDA graph node events as an event kind: nsys's ``CUDA_GRAPH_NODE_EVENTS`` table.

One row per graph node the application created (``cudaGraphAdd*Node``, or a node cloned
when a graph was instantiated): when, on which thread, by which call, and which node
(``graphNodeId``; ``originalGraphNodeId`` is the node a clone was made from). Kernels and
memory operations launched from a graph carry the same ``graphNodeId`` (spec §1.4, "CUDA
graphs"). nsys up to 2023.4 named this table ``CUDA_GRAPH_EVENTS``; newer exports use that
name for whole graphs and keep nodes here.

Everything Strata does with the kind follows from its registry entry below: the loader reads
and checks the table by its spec (as ``report.tables["cuda_graph"]``), the cache keeps it,
its events are thread rows on the timeline (nested per thread, like CUDA API calls) with
their detail lines, a summary tab of per-name statistics, a ``window(kind="cuda_graph")``,
matches in a search, ``ReportSet.events("cuda_graph")`` and ``strata export`` (tables and
Chrome trace).
"""

from __future__ import annotations

from strata.analysis._tablespecs import SPECS
from strata.analysis.kinds.details import EventDetail, Lines, thread_details
from strata.analysis.kinds.registry import (
    DURATION,
    EventKind,
    Panel,
    register,
)

__all__ = ["CUDA_GRAPH", "CUDA_GRAPH_TABLE"]

#: The table (its spec among the loader's, analysis._tablespecs: read by every process,
#: the ``stats`` paths that import no kind module included).
CUDA_GRAPH_TABLE = SPECS["cuda_graph"]


def _details(event: EventDetail) -> Lines:
    """Thread, graph node, and the node a cloned node was made from."""
    nodes = event.report.tables["cuda_graph"]
    lines = thread_details(event)
    lines.append(("Graph node", str(int(nodes["graph_node_id"][event.row]))))
    original = int(nodes["original_graph_node_id"][event.row])
    if original >= 0:
        lines.append(("Cloned from node", str(original)))
    return lines


CUDA_GRAPH = register(
    EventKind(
        "cuda_graph",
        "CUDA graph nodes",
        ("cuda_graph",),
        table=CUDA_GRAPH_TABLE,
        place="thread",
        panels=(Panel("cuda_graph", DURATION, "CUDA graph nodes"),),
        details=_details,
    )
)
