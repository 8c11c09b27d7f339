"""What the benches and the tests share, so that neither imports the other.

``bench/`` holds scripts (``python bench/NAME.py``) that import their shared parts from here:
the command lines, the harness comparison, the tables, the ``--markdown`` copy. The tests test
those parts here, and both use the fixtures and corpora kept here: the tiny ``kv`` library, a
throwaway PostgreSQL server, the bank writer process, the hostile-input corpora
(:mod:`benchkit.security`). ``tests/unit/test_import_contract.py`` holds bench and tests apart.
"""
