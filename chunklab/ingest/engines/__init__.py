"""Where the ingest stages run: this machine's worker processes, or a Ray cluster."""
