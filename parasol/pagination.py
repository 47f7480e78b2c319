"""API pagination with a ceiling, and bad paging answered with 400 (DRF's own falls back to the first page).

`?limit=-5&offset=abc` silently served the default page: the caller never learnt that it asked
for something else. Here `limit` is 1 to `max_limit` and `offset` 0 or more, each given at most
once as plain digits; the schema publishes exactly these bounds.
"""

import re

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination

from parasol.api_fields import single_query_value

DIGITS = re.compile(r"[0-9]+")


class CappedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = 1000

    def get_limit(self, request):
        return self._count(request, self.limit_query_param, self.default_limit, minimum=1, maximum=self.max_limit)

    def get_offset(self, request):
        return self._count(request, self.offset_query_param, 0, minimum=0, maximum=None)

    def _count(self, request, name, default, *, minimum, maximum):
        raw = single_query_value(request, name)
        if raw is None:
            return default
        value = int(raw) if DIGITS.fullmatch(raw) else None
        if value is None or value < minimum or (maximum is not None and value > maximum):
            bounds = f"from {minimum} to {maximum}" if maximum is not None else f"{minimum} or more"
            raise ValidationError({name: [f"{name} must be a whole number {bounds}."]})
        return value

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.limit_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_limit)
            elif parameter["name"] == self.offset_query_param:
                parameter["schema"].update(minimum=0)
        return parameters
