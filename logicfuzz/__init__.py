"""The application around the graph: the ``logicfuzz`` command, the runner and the report.

- ``cli*``: the command line (``run``, ``init-benchmark``, ``memory``, ``report``);
- ``runner``: targets in parallel, each its own graph run with checkpoints; run summaries;
- ``checkpoints``: the checkpoint store (SQLite per target, or PostgreSQL);
- ``results``: what a finished target writes;
- ``report*``: the HTML and Markdown report of a run directory.
"""
