"""swemine launchers."""
