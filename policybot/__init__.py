"""PolicyBot: local-first question answering over policy documents, with page-exact citations."""

__version__ = "0.1.0"
