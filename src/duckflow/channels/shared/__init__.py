"""`duckflow serve --redis URL --database URL`: the server's state on Redis and PostgreSQL (docs/deploy.md).

Without those two URLs nothing here is imported: SQLite and one process stay the default.
With them, PostgreSQL keeps what must last (pg.py, pgstores.py, pggate.py), Redis carries what
is live (redislog.py: chunks; lease.py: one turn at a time and the per-session queue), and
`wiring.build` puts the parts in place of the SQLite ones behind the same interfaces.
"""
