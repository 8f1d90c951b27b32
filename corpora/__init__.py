"""Readers: trajectories, tasks and repository sources, normalized into canonical records."""
