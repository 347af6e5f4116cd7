"""What is added to a chunk before it is embedded: its document title and section path."""
