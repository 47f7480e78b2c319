"""Where the live report keeps what it reuses: the configured Django cache, under keys derived from the inputs.

A key is made of what a result is computed from (digests of its arguments, the data versions of what
it read from the database) and of `code_digest`, the source of the code that computes it, as
joblib.Memory keys a call: a result is never reused for other inputs or by other code, and no key
lists a version bumped by hand. The cache is Django's public API over diskcache's backend (settings):
values are pickled, large ones into files of their own, read back without being inflated.
"""

from django.core.cache import cache as default_cache

from reports.machinery.digests import code_digest, digest, settings_digest

CACHE_SECONDS = 7 * 24 * 3600


class Store:
    """Results under derived keys in a Django cache (the configured one by default)."""

    def __init__(self, cache=None):
        self.cache = cache if cache is not None else default_cache

    @staticmethod
    def key(name: str, *inputs) -> str:
        """The key of the result `name` computed from `inputs` (digests, versions) by this code, under these
        settings (`digests.report_setting`)."""
        return f"parasol-{name}:{digest(repr((inputs, settings_digest())))}:{code_digest()}"

    def get(self, key):
        return self.cache.get(key)

    def set(self, key, value, timeout=CACHE_SECONDS):
        self.cache.set(key, value, timeout)

    def get_or_set(self, key, compute, timeout=CACHE_SECONDS):
        """The value under `key`, or `compute()` stored there (not read back: the pairs are tens of MB)."""
        found = self.get(key)
        if found is None:
            found = compute()
            self.set(key, found, timeout)
        return found
