"""The exporter sidecar: scrape -> snapshot -> derive -> expose."""
