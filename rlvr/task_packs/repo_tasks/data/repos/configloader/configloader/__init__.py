"""Loading INI-style configuration text into typed nested dictionaries."""
