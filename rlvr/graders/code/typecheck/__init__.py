"""The type layer: pyright (bundled, offline) run as a warm server or batched CLI over candidates."""
