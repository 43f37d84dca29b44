"""The AWAFS test suite (pytest; docs/testing.md) and the soak."""
