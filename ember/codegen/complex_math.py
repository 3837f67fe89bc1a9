"""Complex math placeholder."""
OPCODES = frozenset()
