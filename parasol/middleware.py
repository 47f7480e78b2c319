"""Request-size cap, NUL characters refused, and Content-Security-Policy, for every response."""

import re

from django.conf import settings
from django.http import Http404, HttpResponse, JsonResponse

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


# A JSON string's NUL: "\u0000" not itself escaped (an even run of backslashes before it).
JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")
NUL_MESSAGE = "The request contains a NUL character (0x00, %00 or \\u0000), which no text here may hold."


class NulCharacterMiddleware:
    """No NUL reaches a view: PostgreSQL stores none in text and answers one in a query with an error (a 500).

    A NUL in the path (a slug, a token, an id) names nothing: 404, as any unknown address. A NUL in
    text the client sends (query string, form fields and file names, JSON bodies) is refused: 400,
    saying so. Uploaded file contents are left to the importer, whose message names the line.
    Runs after the authentication middleware, so the 404 page renders as every other one.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path_info:
            raise Http404("No such page.")
        # A cookie holding a NUL is no one's: dropped, as if absent (a judge's cookie is looked up).
        for name in [name for name, value in request.COOKIES.items() if "\x00" in name + value]:
            del request.COOKIES[name]
        if self._has_nul(request):
            if request.path_info.startswith("/api/"):
                return JsonResponse({"detail": NUL_MESSAGE}, status=400)
            return HttpResponse(NUL_MESSAGE, status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)

    def _has_nul(self, request):
        if _any_nul(request.GET):
            return True
        content_type = request.META.get("CONTENT_TYPE", "")
        if content_type.startswith("application/json"):
            body = request.body
            return b"\x00" in body or JSON_NUL.search(body) is not None
        if not content_type.startswith(("multipart/form-data", "application/x-www-form-urlencoded")):
            return False
        if request.method == "POST" and not request.path_info.startswith("/api/"):
            # A page's form, parsed here as the CSRF check would anyway; file contents are the importer's.
            names = [upload.name or "" for upload in request.FILES.values()]
            return _any_nul(request.POST) or any("\x00" in name for name in names)
        # The API parses its body itself (a parsed form would hide an unsupported one from it), and
        # Django leaves PUT and PATCH bodies raw: the bytes are read, and stay readable.
        body = request.body
        return b"\x00" in body or (content_type.startswith("application/x-www") and b"%00" in body)


def _any_nul(query_dict):
    return any("\x00" in key or any("\x00" in value for value in values) for key, values in query_dict.lists())


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response
