"""Puts the repository root on sys.path so tests and AppTest scripts import `core` and `ui` alike."""
