"""Playthrough golden files (OpenSpiel style) and legal-action count data.

Regenerate with ``.venv/bin/python -m tests.playthroughs.generate``.
"""
