"""sleuth.workspace."""
