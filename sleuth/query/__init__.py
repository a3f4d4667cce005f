"""sleuth.query."""
