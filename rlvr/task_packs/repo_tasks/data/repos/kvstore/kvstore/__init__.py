"""A key-value store on sqlite, with versioned schema migrations."""
