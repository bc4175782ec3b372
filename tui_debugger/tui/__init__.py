"""The Textual front end: `create_app` builds it, `run_app` runs it (the CLI's entry)."""
