"""swemine pipelines."""
