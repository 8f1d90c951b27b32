"""swemine miners: tasks."""
