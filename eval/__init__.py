"""make eval's experiments on real TCP through the switch (README.md)."""
