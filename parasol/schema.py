"""The error answers every API operation can give, added to the published schema (a drf-spectacular hook).

Each status is added where the server can really answer it, decided from the operation itself:
- every operation: 400 (a query parameter repeated, out of bounds or holding a NUL), 401 (no or a
  wrong token), 403 (not a researcher, or not allowed this campaign's action), 406 (an `Accept`
  the API cannot serve), 414 (a request line too long for the front server), 429 (throttled);
- an operation with a path parameter: 404 (no such object, or not one this researcher may see);
- one that takes a body: 409 (it conflicts with stored data, or two of its values with each other:
  `parasol.api_fields.Conflict`), 413 (a body over the size limit), 415 (a body that is not JSON).
"""

import re

from django.conf import settings

DETAIL = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
# A serializer's answer names each field it refuses ({"name": ["..."]}); other checks answer {"detail": "..."}.
FIELD_ERRORS = {
    "type": "object",
    "additionalProperties": {},
    "description": "The problems, by field name (a list of messages each), or one message under `detail`.",
}
TEXT = {"text/plain": {"schema": {"type": "string"}}}


def _json(schema_name, description):
    return {"description": description, "content": {"application/json": {"schema": {"$ref": schema_name}}}}


ALWAYS = {
    "400": _json("#/components/schemas/FieldErrors", "A parameter or the body breaks a rule stated here."),
    "401": _json("#/components/schemas/Detail", "No API token, or a wrong one."),
    "403": _json("#/components/schemas/Detail", "Not a researcher, or an action reserved to the campaign's owner."),
    "406": _json("#/components/schemas/Detail", "The Accept header names no type this operation answers with."),
    "429": _json("#/components/schemas/Detail", "Too many requests (or wrong tokens) from this caller: wait."),
    # Refused by the front server (gunicorn's request-line limit, 4,094 bytes) before Django sees the request.
    "414": {
        "description": "The path and query are longer than the server reads.",
        "content": {"text/html": {"schema": {"type": "string"}}, **TEXT},
    },
}
WITH_PATH_PARAMETER = {"404": _json("#/components/schemas/Detail", "No such object among those this caller may see.")}
WITH_BODY = {
    "409": _json("#/components/schemas/FieldErrors", "The body conflicts with stored data, or with itself."),
    "413": {"description": "The body is larger than the server accepts.", "content": TEXT},
    "415": _json("#/components/schemas/Detail", "The body is not JSON."),
}


def _rules_no_field_states(result):
    """Rules a serializer field cannot publish: a list body's size, and "sources or sources_from_campaign"."""
    pairs = result["paths"]["/api/campaigns/{slug}/pairs/"]["post"]["requestBody"]["content"]["application/json"]
    pairs["schema"].update(minItems=1, maxItems=settings.PARASOL_IMPORT_MAX_ROWS)
    result["components"]["schemas"]["GenerationRunRequest"]["anyOf"] = [
        {"required": ["sources"]},
        {"required": ["sources_from_campaign"], "properties": {"sources_from_campaign": {"enum": [True]}}},
    ]


def _closed_request_bodies(schemas):
    """A body holds only the listed fields (parasol.api_fields.RefusesUnknownFields refuses any other)."""
    for name, schema in schemas.items():
        if name.endswith("Request") and schema.get("type") == "object":
            schema["additionalProperties"] = False


def _without_blank_alternatives(node):
    """drf-spectacular offers `""` beside a pattern as `oneOf: [pattern, maxLength 0]`; where the pattern
    itself allows "", both match and `oneOf` (exactly one) refuses "": the pattern alone says it."""
    if isinstance(node, list):
        for item in node:
            _without_blank_alternatives(item)
        return
    if not isinstance(node, dict):
        return
    options = node.get("oneOf")
    if isinstance(options, list) and len(options) == 2 and options[1] == {"type": "string", "maxLength": 0}:
        inner = options[0]
        if "minLength" not in inner and re.search(inner.get("pattern", ""), ""):
            del node["oneOf"]
            node.update(inner)
    for value in node.values():
        _without_blank_alternatives(value)


def add_error_responses(result, generator, request, public):
    """drf-spectacular postprocessing hook: the error statuses of every operation, with their bodies."""
    _rules_no_field_states(result)
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    _closed_request_bodies(schemas)
    _without_blank_alternatives(result)
    schemas["Detail"], schemas["FieldErrors"] = DETAIL, FIELD_ERRORS
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            responses = operation.setdefault("responses", {})
            extra = dict(ALWAYS)
            if any(parameter.get("in") == "path" for parameter in operation.get("parameters", [])):
                extra |= WITH_PATH_PARAMETER
            if "requestBody" in operation:
                extra |= WITH_BODY
            for status, response in extra.items():
                responses.setdefault(status, response)
    return result
