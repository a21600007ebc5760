"""One module per CLI command; each registers itself on cli.app."""
