"""swemine manifests."""
