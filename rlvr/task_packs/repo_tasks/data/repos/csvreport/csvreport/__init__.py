"""A CSV report pipeline: parse, aggregate, render."""
