"""Security headers on every response (pages, API, static files).

The Content-Security-Policy allows only this site's own scripts, styles, fetches and form targets: no
inline script or style (the templates carry none: data for scripts sits in ``<script
type="application/json">`` blocks, widths and colours are SVG attributes), no plugins, no ``<base>``,
and no framing by any site (``frame-ancestors 'none'``, and ``X-Frame-Options: DENY`` for browsers that
predate it). HSTS is sent in production only, where the arena is served over HTTPS (deploy/README.md);
on a development machine it would pin plain-HTTP localhost to HTTPS.
"""

from __future__ import annotations

from flask import Flask
from werkzeug.wrappers import Response

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "font-src 'self'",  # the Hangul subset (static/fonts/), for machines without a Korean font
    "img-src 'self' data:",  # data: for the empty favicon (<link rel="icon" href="data:,">)
    "connect-src 'self'",  # the tournament page polls the API
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
])
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # Other sites never see our URLs; our own HTTPS form posts keep the Referer that the CSRF check wants.
    "Referrer-Policy": "same-origin",
}
STRICT_TRANSPORT_SECURITY = "max-age=31536000; includeSubDomains"


def init_security_headers(app: Flask, production: bool) -> None:
    """Add the headers to every response a view, an error handler or the static route gives."""
    headers = dict(HEADERS, **({"Strict-Transport-Security": STRICT_TRANSPORT_SECURITY} if production else {}))

    @app.after_request
    def _security_headers(response: Response) -> Response:
        for name, value in headers.items():
            response.headers.setdefault(name, value)
        return response
