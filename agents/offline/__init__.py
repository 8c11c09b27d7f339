"""The offline model's C reasoning engine.

Prototype parsing, function analysis, harness synthesis, compile-error fixing and coverage
improvement: deterministic, local, and free of any LLM framework.
"""
