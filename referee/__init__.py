"""The referee: pure game rules (``referee.games``) and the match runner, the only code that talks
HTTP to bots."""
