"""TypeScript code tasks: the code family's four layers (syntax, types, tests, perf) for a second language.

`extract` (the program from a completion), `syntax` (tree-sitter-typescript), `toolchain` (node and the
pinned compiler), `compiler` (the warm trusted compiler process: batched strict type checks, builds
with op counters), `oracle` (the Python task's trusted oracle, read through JSON), `grader`.
"""
