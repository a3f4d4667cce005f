"""sleuth.edit."""
