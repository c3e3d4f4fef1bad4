"""Hidden property tests for code tasks: input shapes and domains, hypothesis generation, stateful
method sequences, mutation-based strengthening."""
