"""The client's address, from the proxy's header only when a proxy is declared.

Behind a reverse proxy every request arrives from the proxy's address, so
rate limits keyed on REMOTE_ADDR would lump every client together; without a
declared proxy, X-Forwarded-For is whatever the client wrote and is ignored.
"""

from django.conf import settings


def client_address(request):
    """The address the outermost trusted proxy saw, or REMOTE_ADDR when no proxy is declared."""
    proxies = settings.PARASOL_TRUSTED_PROXIES
    remote = request.META.get("REMOTE_ADDR", "")
    if proxies == 0:
        return remote
    # Each proxy appends the address it received from; the last `proxies` entries are
    # theirs to vouch for, anything further left was written by the client.
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if len(forwarded) < proxies:
        return forwarded[0] if forwarded else remote
    return forwarded[-proxies]
