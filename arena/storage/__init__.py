"""Durable storage: SQLAlchemy models, the database handle and migrations."""
