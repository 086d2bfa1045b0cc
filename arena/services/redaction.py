"""Keep a bot's address its owner's: fault messages come from the HTTP client and may name the bot's
host, port, path or resolved address (``HTTPConnectionPool(host='bots.example.org', port=8443)``).
Replays and fault rows are public, so those are blanked before anything is stored (docs/api.md: a bot's
``url`` is shown only to its owner; docs/protocol.md: replays never carry URLs)."""

from __future__ import annotations

import ipaddress
import re
from typing import Any
from urllib.parse import urlsplit

BOT = "<bot>"
_PORT = re.compile(r"\bport([= ])\d+")  # urllib3's "port=8443", the guard's "port 8443"
_ADDRESS_LIKE = re.compile(r"[0-9A-Fa-f:.]*[.:][0-9A-Fa-f:.]*")
_PORT_AFTER = re.compile(r"(<address>\]?|<bot>\]?):\d+")


def without_addresses(text: str, urls: list[str]) -> str:
    """``text`` with every part of ``urls`` (URL, host:port, host, base path) and every IP literal blanked."""
    for url in sorted(urls, key=len, reverse=True):
        try:
            parts = urlsplit(url)
        except ValueError:
            parts = None
        base = parts.path.rstrip("/") if parts else ""
        for part in (url, url.rstrip("/"), parts.netloc if parts else "", (parts.hostname or "") if parts else ""):
            if part:
                text = text.replace(part, BOT)
        if base:
            text = text.replace(base + "/", BOT + "/")
    text = _PORT.sub(rf"port\g<1>{BOT}", text)
    text = _ADDRESS_LIKE.sub(_blank_address, text)
    return _PORT_AFTER.sub(rf"\1:{BOT}", text)  # a port right after a blanked host or address


def _blank_address(match: re.Match[str]) -> str:
    text = match.group()
    if _is_ip(text):
        return "<address>"
    host, colon, port = text.rpartition(":")  # an IPv4 address with its port
    return f"<address>:{BOT}" if colon and port.isdigit() and _is_ip(host) else text


def _is_ip(text: str) -> bool:
    for candidate in (text, text.rstrip(".:")):  # an address may end a sentence
        try:
            ipaddress.ip_address(candidate)
        except ValueError:
            continue
        return True
    return False


def redact_replay(replay: dict[str, Any], urls: list[str]) -> None:
    """Blank the bots' addresses in every fault of ``replay`` (the list and each decision's), in place.
    ``urls``: the seats' URLs in seat order. A fault is blanked with its own seat's URL only: it names the
    bot that made it, and part of its text is the bot's own (a wrong "turn" is quoted), so blanking every
    seat's URL in it let a bot write guesses there and read in the replay which one had become "<bot>"."""
    faults = [(fault.get("seat"), fault) for fault in replay.get("faults", [])]
    faults += [(d.get("seat"), d["fault"]) for step in replay.get("steps", []) for d in step.get("decisions", [])
               if d.get("fault")]
    for seat, fault in faults:
        own = [urls[seat]] if isinstance(seat, int) and 0 <= seat < len(urls) else urls
        for key in ("message", "excerpt"):
            if isinstance(fault.get(key), str):
                fault[key] = without_addresses(fault[key], own)


def public_replay(replay: dict[str, Any]) -> dict[str, Any]:
    """The replay as anyone may download it: fault excerpts (what a bot answered when it failed) are
    its owner's, shown on the bot page, so they are blanked here. Verification does not need them."""
    doc = dict(replay)
    doc["faults"] = [{**fault, "excerpt": ""} for fault in replay.get("faults", [])]
    doc["steps"] = [
        {**step, "decisions": [{**d, "fault": {**d["fault"], "excerpt": ""}} if d.get("fault") else d
                               for d in step["decisions"]]}
        for step in replay.get("steps", [])
    ]
    return doc
