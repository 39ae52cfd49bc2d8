"""Benchmarks of artic against its peers on the same models in the same run; run each from the repository root
as a module (`python -m benchmarks.bench_step`), results in docs/benchmarks.md."""
