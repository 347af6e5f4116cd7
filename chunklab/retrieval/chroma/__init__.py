"""The Chroma store: a folder or a server, its lock, aliases, records and repair."""
