"""The experience memory's three modes: the one definition every layer reads.

``baseline`` (no retrieval, no writes), ``retrieve-extract`` (retrieve, then write hits,
validations and new records), ``retrieve-only`` (retrieve, never write). Kept apart from the
experience package so that the run's context can name them without loading the bank.
"""

MODES: tuple[str, ...] = ("baseline", "retrieve-extract", "retrieve-only")
