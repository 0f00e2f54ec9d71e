"""Alembic environment of the ladder schema.

:func:`ladder.db.migrate` passes an open SQLAlchemy connection (already inside
a transaction holding the migration advisory lock) in
``config.attributes["connection"]``. Without it (alembic used directly with a
config from :func:`ladder.db.alembic_config`), the ``sqlalchemy.url`` option is
used, or SQL is printed in offline (``--sql``) mode.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

config = context.config


def run_offline() -> None:
    context.configure(url=config.get_main_option("sqlalchemy.url"), literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, transactional_ddl=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "", poolclass=NullPool)
    try:
        with engine.connect() as conn:
            context.configure(connection=conn, transactional_ddl=True)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
