"""DLProf-style aggregation of a deep-learning run: ops, kernels, iterations, advice.

spec: ``dlprof.md``. :func:`analysis.dlprof.reports.dlprof_reports` builds the tables
``main.py dlprof`` prints; :mod:`analysis.dlprof.ops` finds the framework ops and what they
launched; :mod:`analysis.dlprof.markers` reads the NVTX texts PyTorch and DLProf push.
"""
