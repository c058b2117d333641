"""Alembic environment: the engine is handed in by `store.db.migrate`."""

from alembic import context
from sqlmodel import SQLModel

import store.models  # noqa: F401 - registers the tables on SQLModel.metadata

config = context.config
target_metadata = SQLModel.metadata


def run_migrations_online() -> None:
    engine = config.attributes.get("engine")
    if engine is None:
        from store.db import make_engine

        engine = make_engine(config.get_main_option("sqlalchemy.url"))
    with engine.begin() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        context.run_migrations()


run_migrations_online()
