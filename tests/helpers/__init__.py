"""Helpers shared by the test modules (imported, never collected)."""
