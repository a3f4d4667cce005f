"""sleuth.text_search."""
