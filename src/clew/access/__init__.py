"""Who may reach a store: the HTTP server's keys and request log (`keys`) and a PostgreSQL
store's database roles (`roles`).

May import: `clew.kernel`, `clew.core` and the store's contract through the kernel.
"""
