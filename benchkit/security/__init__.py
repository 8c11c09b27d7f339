"""Corpora of hostile inputs: harnesses, model replies, memory files, command lines, secrets.

Each module measures how LogicFuzz holds against its corpus (``bench/hostile.py`` prints them all)
and is tested under ``tests/security/``.
"""
