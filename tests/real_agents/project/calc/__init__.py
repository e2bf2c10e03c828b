"""A tiny calculator with one bug, for wfx's contract suite."""
