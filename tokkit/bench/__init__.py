"""The benchmark harness behind `tokkit bench` and the scripts in benchmarks/."""
