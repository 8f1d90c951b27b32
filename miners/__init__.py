"""swemine miners."""
