"""Text utilities: tokenising, counting and transforming short texts."""
