"""Atrium's sidecar benchmarks: `python -m bench` (or `make bench`), `python -m bench <name>`.

Figures only, never assertions: every ratio is against a baseline measured in the same run (the
machine is shared and noisy), from repeated, interleaved trials, reported as medians (and p90).
Each target from the issue is printed as PASS or MISS; a miss never makes the exit code non-zero.
Not part of the test suite.
"""
