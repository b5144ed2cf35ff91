"""Storage: SQLite by default, Redis / Postgres backends behind extras."""
