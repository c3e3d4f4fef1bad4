"""A tiny HTTP-style router: path patterns with typed parameters, dispatch to handlers."""
