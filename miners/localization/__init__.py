"""swemine miners: localization."""
