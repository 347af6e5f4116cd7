"""Question sets with gold spans, made from each corpus."""
