"""Serializer fields that take only the JSON type the schema publishes, and declare every rule they enforce.

DRF's own fields coerce: a string field takes the number 5, an integer field the string "5",
a boolean the number 0. The published schema says `string`, `integer`, `boolean`; these fields
keep the server to it (a 400 naming the field), so the schema is the whole contract. Each rule
is a validator that drf-spectacular publishes (a pattern, a length, a bound), enforced by that
same validator: one fact, stated once.
"""

import math

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import APIException, ValidationError

# No text may hold a NUL (parasol.middleware refuses it before any view): the schema says so.
NO_NUL = RegexValidator(r"^[^\x00]*$", "Text may not hold a NUL character (0x00).")


def _escaped_class(characters) -> str:
    """A regex character class body naming each of `characters` by its code point (\\uXXXX), in runs: read
    alike by Python and by the ECMA regexes of a JSON schema's `pattern`."""
    points, runs = sorted(map(ord, characters)), []
    for point in points:
        if runs and point == runs[-1][1] + 1:
            runs[-1][1] = point
        else:
            runs.append([point, point])
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in runs)


# What the server trims as white space (Python's str.strip: \x1c-\x1f and \x85 too, which an ECMA `\s` lacks):
# spelled out, so the schema and the server call the same text blank.
WHITE_SPACE = _escaped_class(chr(point) for point in range(0x3001) if chr(point).isspace())
# At least one character that is neither a NUL nor white space (white space around it is trimmed).
NOT_BLANK = RegexValidator(f"^[^\\x00]*[^\\x00{WHITE_SPACE}][^\\x00]*$", "This field may not be blank.")


class Conflict(APIException):
    """409: the request is well formed but conflicts with stored data, or one value with another."""

    status_code = 409
    default_detail = "The request conflicts with the current state of the resource."
    default_code = "conflict"


def conflict(field, message):
    return Conflict({field: [message]})


class TextOnly:
    """Refuses anything but a JSON string ("Not a valid string.")."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictCharField(TextOnly, serializers.CharField):
    """A string, never a number; no NUL; non-blank unless `allow_blank` (then it may be empty)."""

    def __init__(self, **kwargs):
        allow_blank = kwargs.get("allow_blank", False)
        validators = [*kwargs.pop("validators", [])]
        # A read-only field's value is what was stored (a run's empty `error`): no input rule to publish.
        writable = not kwargs.get("read_only", False)
        if writable and not any(isinstance(validator, RegexValidator) for validator in validators):
            validators.append(NO_NUL if allow_blank else NOT_BLANK)
        super().__init__(validators=validators, **kwargs)


class StrictSlugField(TextOnly, serializers.SlugField):
    """A slug, given as a string (its pattern already excludes NUL and white space)."""


class StrictChoiceField(serializers.ChoiceField):
    """One of the published strings, exactly (DRF's own matches `str(value)`: 1 for "1")."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        known = ", ".join(str(choice) for choice in self.choices)
        self.error_messages["invalid_choice"] = f'"{{input}}" is not one of: {known}.'

    def to_internal_value(self, data):
        if not isinstance(data, str) and not (data is None and self.allow_null):
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer: 5, or 5.0 (JSON Schema counts a number with no fraction as an integer); never "5"."""

    def to_internal_value(self, data):
        if isinstance(data, float) and data.is_integer():
            data = int(data)
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        try:
            value = float(data)
        except OverflowError:  # an integer beyond any float
            self.fail("invalid")
        if not math.isfinite(value):
            self.fail("invalid")
        return super().to_internal_value(value)


class StrictBooleanField(serializers.BooleanField):
    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class RefusesUnknownFields:
    """A body holds only the fields the schema lists (`additionalProperties: false`): a typo is a 400, not ignored."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            writable = {name for name, field in self.fields.items() if not field.read_only}
            unknown = sorted(set(data) - writable)
            if unknown:
                raise ValidationError({unknown[0]: ["Unknown field (or one that cannot be written)."]})
        return super().to_internal_value(data)


# A ModelSerializer whose generated fields are the strict ones above (a comment: drf-spectacular would
# publish a docstring as the description of every serializer built on it).
class StrictModelSerializer(RefusesUnknownFields, serializers.ModelSerializer):
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        **{
            model_field: strict
            for model_field, field in serializers.ModelSerializer.serializer_field_mapping.items()
            for loose, strict in (
                (serializers.CharField, StrictCharField),
                (serializers.SlugField, StrictSlugField),
                (serializers.IntegerField, StrictIntegerField),
                (serializers.FloatField, StrictFloatField),
                (serializers.BooleanField, StrictBooleanField),
            )
            if field is loose
        },
    }
    serializer_choice_field = StrictChoiceField


def single_query_value(request, name, default=None):
    """A query parameter given at most once (a repeated one is ambiguous: 400), or `default`."""
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise ValidationError({name: [f"Give {name} at most once."]})
    return values[0] if values else default


NO_NUL_PATTERN = NO_NUL.regex.pattern.replace("\\x", "\\u00")  # as drf-spectacular publishes a RegexValidator


@extend_schema_field(
    {
        "type": "object",
        "propertyNames": {"pattern": NO_NUL_PATTERN},
        "additionalProperties": {
            "anyOf": [
                {"type": "string", "pattern": NO_NUL_PATTERN},
                {"type": "number"},
                {"type": "boolean"},
                {"type": "null"},
            ]
        },
    }
)
class FlatMetadataField(serializers.DictField):
    """Metadata as an object of scalars: names and strings without NUL; numbers, booleans, null."""

    default_error_messages = {"scalar": "Give a string, a number, true, false or null (no list, no object)."}

    def to_internal_value(self, data):
        data = super().to_internal_value(data)
        for key, value in data.items():
            NO_NUL(key)
            if isinstance(value, list | dict):
                raise ValidationError({key: [self.error_messages["scalar"]]})
            if isinstance(value, str):
                NO_NUL(value)
        return data


def sentence_field(**kwargs):
    """A sentence (a pair's source or hypothesis, a generation source): text up to PARASOL_MAX_SENTENCE_CHARS,
    the refusal naming the setting that bounds it."""
    from django.conf import settings

    limit = settings.PARASOL_MAX_SENTENCE_CHARS
    message = f"At most {limit:,} characters (PARASOL_MAX_SENTENCE_CHARS)."
    return StrictCharField(max_length=limit, error_messages={"max_length": message}, **kwargs)
