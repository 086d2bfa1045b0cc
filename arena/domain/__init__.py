"""Pure arena logic with no I/O: which bots meet at which tables, in which seats, on which deals."""
