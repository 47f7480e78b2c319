"""Request-size cap, NUL characters refused, Content-Security-Policy for every response; no caching of API answers."""

import json
import re

from django.conf import settings
from django.http import Http404, HttpResponse, JsonResponse
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


# A JSON string's NUL: "\u0000" not itself escaped (an even run of backslashes before it). A raw
# 0x00 byte is no JSON at all (or UTF-16): the parser refuses it on its own.
JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")
FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")
NUL_MESSAGE = "{where} contains a NUL character (0x00, sent as %00 or \\u0000), which no text here may hold."


class NulCharacterMiddleware:
    """No NUL reaches a view: PostgreSQL stores none in text and answers one in a query with an error (a 500).

    A NUL in the path (a slug, a token, an id) names nothing: 404, as any unknown address. A NUL in
    text the client sends (query string, form fields and file names, JSON bodies) is refused: 400,
    naming where it is. Uploaded file contents are left to the importer, whose message names the line.
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
        where = _where_nul(request)
        if where is None:
            return self.get_response(request)
        message = NUL_MESSAGE.format(where=where)
        if request.path_info.startswith("/api/"):
            return JsonResponse({"detail": message}, status=400)
        return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")


def _where_nul(request):
    """Where the request's text holds a NUL ("The query parameter 'c'"...), or None."""
    where = _field_with_nul(request.GET, "The query parameter")
    if where is not None:
        return where
    content_type = request.META.get("CONTENT_TYPE", "")
    if content_type.startswith("application/json"):
        return _json_nul(request.body)
    if not content_type.startswith(FORM_TYPES):
        return None
    if request.method == "POST" and not request.path_info.startswith("/api/"):
        # A page's form, parsed here as the CSRF check would anyway; file contents are the importer's.
        names = {field: upload.name or "" for field, upload in request.FILES.items()}
        return _field_with_nul(request.POST, "The form field") or _field_with_nul(names, "The file name of")
    # The API parses its body itself (a parsed form would hide an unsupported one from it), and
    # Django leaves PUT and PATCH bodies raw: the bytes are read, and stay readable.
    body = request.body
    if b"\x00" in body or (content_type.startswith(FORM_TYPES[1]) and b"%00" in body):
        return "The request body"
    return None


def _field_with_nul(fields, what):
    for key in fields:
        values = fields.getlist(key) if hasattr(fields, "getlist") else [fields[key]]
        if "\x00" in key or any("\x00" in value for value in values):
            return f"{what} {key.replace(chr(0), '␀')!r}"
    return None


def _json_nul(body):
    if JSON_NUL.search(body) is None:
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None  # not JSON: the API's parser says so
    return f"The JSON body at {_json_path_of_nul(data, '') or 'its top level'}"


def _key_step(path, key):
    """`path.key` for a plain key; `path["…"]` (JSON-escaped) for one with spaces or control characters."""
    shown = key.replace(chr(0), "␀")
    if re.fullmatch(r"[\w␀]+", shown):
        return f"{path}.{shown}".lstrip(".")
    return f"{path}[{json.dumps(shown, ensure_ascii=False)}]"


def _json_path_of_nul(value, path):
    """The path (`[0].source`) of the first string or key holding a NUL."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        inner = f"{path}[{key}]" if isinstance(key, int) else _key_step(path, key)
        if isinstance(key, str) and "\x00" in key:
            return f"{inner} (a key)"
        found = _json_path_of_nul(item, inner)
        if found is not None:
            return found
    return None


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


class CacheDownMiddleware:
    """Redis (the report cache and the broker, as compose runs it) unreachable: a page that needs it says so
    with a 503 rather than a 500. Judge pages never read it; reports, their tables and scoring progress do."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        import redis

        if not isinstance(exception, redis.RedisError):
            return None
        from django.shortcuts import render

        return render(request, "cache_down.html", {"error": type(exception).__name__}, status=503)
