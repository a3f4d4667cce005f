"""sleuth.graph."""
