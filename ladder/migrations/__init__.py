"""Alembic migrations of the ladder schema; run them with :func:`ladder.db.migrate`."""
