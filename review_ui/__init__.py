"""The Streamlit review queue: sign-in, queue, item view, discards, audit trail, stats.

The app changes state only through `store` (`store.status` for moves and edits,
`store.editors` for accounts), via `review_ui.desk.decisions`.
"""
