"""swemine filters."""
