"""Summariser backends behind one interface (`summarise.base.Summariser`)."""
