"""copydesk: short, faithful news summaries that ship only after an editor approves them."""

__version__ = "0.1.0"
