"""API pagination with a ceiling: `?limit=` cannot ask for a whole campaign at once."""

from rest_framework.pagination import LimitOffsetPagination


class CappedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = 1000
