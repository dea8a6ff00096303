"""Runs caches against scenarios and references, and writes reports."""
