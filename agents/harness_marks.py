"""Comments that mark parts of a generated harness, shared by whoever writes and reads them.

Each block an improvement adds opens with ``/* LF improve: <its direction> */``: the offline
engine writes it, the improve prompt asks a model for it, and a crash's line in the harness then
names the direction that caused it (``nodes.memory_manager.crashed_block``).
"""

IMPROVE_MARK = "LF improve:"
