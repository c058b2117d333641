"""The store: tables, the status machine, the audit log and migrations.

Nothing outside this package changes an item's status; see `store.status`.
"""
