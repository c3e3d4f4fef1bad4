"""Whole programs on stdin/stdout (and call-based tasks given as expected outputs): the task format
of APPS, CodeContests, TACO and LiveCodeBench. The sandbox runs the program once per test with the
input as data and returns its output as plain data; the comparison happens in the trusted process."""
