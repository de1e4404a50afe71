"""Evidence mode: everything a library says on an issue, as a table of cited passages. The
tools (Search, Lookup), the table, the deterministic planner and the ReAct agent, composed by
``collector.py``."""
