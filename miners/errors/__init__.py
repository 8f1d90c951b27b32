"""swemine miners: errors."""
