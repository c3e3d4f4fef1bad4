"""Planning jobs with dependencies and durations."""
