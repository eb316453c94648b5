"""Method catalogue: one family per file."""
