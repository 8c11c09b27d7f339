"""The fuzzing toolchain: sources, library builds, harness builds, libFuzzer runs, coverage, crashes.

This package never imports LangGraph or any model code: the graph's nodes call it, tests call it
directly, and it can be reused by any other driver.
"""
