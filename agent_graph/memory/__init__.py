"""Run-scoped memory: what one target's run remembers while the graph runs.

- ``session_memory``: the five categories (API constraints, archetype, known fixes, coverage
  strategies, decisions), injected into each agent filtered to what it reads, consolidated
  every 3 iterations;
- ``messages`` and ``tokens``: per-agent histories, their reducer, and exact token counts for
  trimming them to a budget;
- ``local_memory*``: the SE-Agent working memory of attempted directions during coverage
  optimization (schema, rendering, compression);
- ``code_memory*``: CodeMem, a short memory of every generated file, and history compression.
"""
