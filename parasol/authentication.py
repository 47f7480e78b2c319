"""API token authentication that slows guessing (a module of its own: DRF imports it with its settings)."""

import hashlib

from django.conf import settings
from django.core.cache import cache
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed, Throttled

from parasol.net import client_address


def _failures_key(request):
    address = hashlib.sha256(client_address(request).encode()).hexdigest()[:32]
    return f"parasol:api-token-failures:{address}"


class ThrottledTokenAuthentication(TokenAuthentication):
    """After PARASOL_API_TOKEN_FAILURES wrong tokens from one address in a window, refuse with 429."""

    def authenticate(self, request):
        key = _failures_key(request)
        window = settings.PARASOL_API_TOKEN_FAILURE_WINDOW_SECONDS
        if cache.get(key, 0) >= settings.PARASOL_API_TOKEN_FAILURES:
            raise Throttled(wait=window, detail="Too many wrong API tokens from this address; try again later.")
        try:
            return super().authenticate(request)
        except AuthenticationFailed:
            if cache.add(key, 1, timeout=window) is False:
                try:
                    cache.incr(key)
                except ValueError:  # expired between add and incr
                    cache.add(key, 1, timeout=window)
            raise
