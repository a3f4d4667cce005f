"""sleuth.resources."""
