"""A tiny geometry package: the fixture repository of the SWE-bench-style adapter's tests."""
