"""Subcommands of the chunklab CLI, one module each (see chunklab.cli)."""
