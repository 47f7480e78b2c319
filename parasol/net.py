"""The client's address, from the proxy's header only when a proxy is declared.

Behind a reverse proxy every request arrives from the proxy's address, so
rate limits keyed on REMOTE_ADDR would lump every client together; without a
declared proxy, X-Forwarded-For is whatever the client wrote and is ignored.
"""

import ipaddress

from django.conf import settings


def client_address(request):
    """The address the outermost trusted proxy saw, or REMOTE_ADDR when no proxy is declared; normalised."""
    return normalised_address(_raw_client_address(request))


def _raw_client_address(request):
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


def normalised_address(text: str) -> str:
    """One spelling per address, so that limits keyed on it (login lockout, joins, API throttle) see one client.

    `::ffff:10.0.0.5`, `010.000.000.005`, `10.0.0.5:1234` and `[::ffff:a00:5]:80` are all `10.0.0.5`;
    IPv6 is written compressed, without a zone. Text that is no address is returned stripped, as it was.
    """
    text = text.strip()
    host = text
    if host.startswith("[") and "]" in host:  # [v6]:port
        host = host[1 : host.index("]")]
    elif host.count(":") == 1:  # v4:port
        host = host.split(":")[0]
    host = host.split("%")[0]  # an IPv6 zone names the local interface, not the client
    address = _ip(host)
    if address is None:
        return text
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address)


def _ip(host):
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    # ipaddress refuses leading zeros (octal to some parsers); proxies and clients write them as decimal.
    parts = host.split(".")
    if len(parts) == 4 and all(part.isascii() and part.isdigit() and len(part) <= 4 for part in parts):
        try:
            return ipaddress.IPv4Address(".".join(str(int(part)) for part in parts))
        except ValueError:
            return None
    return None
