"""Request-size cap and Content-Security-Policy, for every response; no caching of API answers."""

import re

from django.conf import settings
from django.http import HttpResponse
from django.utils.cache import add_never_cache_headers

# Where a researcher may send a corpus; every other body is a small form or JSON.
UPLOAD_PATHS = re.compile(r"^/(api/|campaigns/[^/]+/upload/$|campaigns/[^/]+/generations/new/$)")

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",  # no inline script or handler anywhere; htmx runs with allowEval off
        "style-src 'self' 'unsafe-inline'",  # progress bars set their width in a style attribute
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class RequestSizeLimitMiddleware:
    """Refuse an over-large body from its Content-Length, before anything (CSRF, the form parser) reads it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return HttpResponse("Bad Content-Length.", status=400, content_type="text/plain")
        upload = UPLOAD_PATHS.match(request.path_info)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE if upload else settings.PARASOL_MAX_REQUEST_BYTES
        if length > limit:
            return HttpResponse(
                f"Request body too large: {length:,} bytes, the limit here is {limit:,}.",
                status=413,
                content_type="text/plain",
            )
        return self.get_response(request)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response


class NoStoreApiMiddleware:
    """API answers (campaign data, exports) are never kept by a browser or proxy cache."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path.startswith("/api/"):
            add_never_cache_headers(response)
        return response
