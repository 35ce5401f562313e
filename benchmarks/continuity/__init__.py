"""The continuity benchmark: scripted long tasks driven through clew's public API,
interrupted by compaction, restart and SIGKILL, and scored against the script's own
ground truth. `python benchmarks/continuity/run.py` prints the tables."""
