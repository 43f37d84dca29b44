"""make bench's benchmarks and the measurements behind the design (README.md)."""
