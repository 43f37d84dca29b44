"""make demo: short-flow FCT on real TCP under three schemes, with a plot."""
