"""Benchmarks: each prints its figures and the ratio it is judged by (see docs/benchmarks.md)."""
