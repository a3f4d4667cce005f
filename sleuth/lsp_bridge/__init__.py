"""sleuth.lsp_bridge."""
