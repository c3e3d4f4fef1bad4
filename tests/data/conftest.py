"""Test data, not tests: the fixture repositories here hold their own test suites (run by the code under
test, e.g. the SWE-bench-style adapter, in a container), which rlvr's own test run must not collect."""

collect_ignore_glob = ["*"]
