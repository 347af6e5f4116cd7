"""What is added to a chunk before it is embedded: its document title and section path (:mod:`.context`),
and a short context the local model writes for it (contextual retrieval, :mod:`.llm_context`)."""
