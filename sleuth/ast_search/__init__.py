"""sleuth.ast_search."""
