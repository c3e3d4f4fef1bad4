"""Caches: least-recently-used with a size bound, and time-to-live over an explicit clock."""
