"""The `artic` command line."""
