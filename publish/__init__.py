"""Publishing: approved items go to the configured targets (Atom feed, JSON Lines,
webhook) exactly once per target, with their evidence map; retractions follow the
same road. Imports only `store` and `guards` (ARCHITECTURE.md's layering)."""
