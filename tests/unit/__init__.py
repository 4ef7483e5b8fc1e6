"""Unit tests: pure code and in-process fakes, never Docker."""
