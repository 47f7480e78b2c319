"""Django's file-based cache, with large values and values that barely compress stored as they are.

A live report reads its 400,000 pairs (60 MB of pickled text) and its score columns (floats,
which zlib shrinks by a third) from the cache at every new judgment: inflating them cost the
page most of a second, reading them as they are a few hundredths. So a value over RAW_ABOVE
bytes is stored as it is; a smaller one is compressed and kept so only when that saves at least
half of it. Reading tells the two apart by their first byte (a pickle starts with 0x80, a zlib
stream never does), so entries written by Django's own backend read back too.
"""

import pickle
import zlib

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.filebased import FileBasedCache
from django.core.files import locks

PICKLE_MARK = 0x80  # the first byte of a pickle of protocol 2 or above
KEEP_COMPRESSED_BELOW = 0.5  # compressed size over raw size under which the compressed bytes are kept
RAW_ABOVE = 8 * 2**20  # bytes of pickle above which a value is stored as it is (disk is cheaper than inflating)


def _encoded(value, protocol) -> bytes:
    raw = pickle.dumps(value, protocol)
    if len(raw) > RAW_ABOVE:
        return raw
    compressed = zlib.compress(raw, 1)
    return compressed if len(compressed) < KEEP_COMPRESSED_BELOW * len(raw) else raw


def _decoded(data: bytes):
    return pickle.loads(data if data[:1] == bytes([PICKLE_MARK]) else zlib.decompress(data))


class FileCache(FileBasedCache):
    """`FileBasedCache` storing each value compressed or as it is (`_encoded`), whichever the module says."""

    def get(self, key, default=None, version=None):
        fname = self._key_to_file(key, version)
        try:
            with open(fname, "rb") as f:
                if not self._is_expired(f):
                    return _decoded(f.read())
        except FileNotFoundError:
            pass
        return default

    def _write_content(self, file, timeout, value):
        expiry = self.get_backend_timeout(timeout)
        file.write(pickle.dumps(expiry, self.pickle_protocol))
        file.write(_encoded(value, self.pickle_protocol))

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            with open(self._key_to_file(key, version), "r+b") as f:
                try:
                    locks.lock(f, locks.LOCK_EX)
                    if self._is_expired(f):
                        return False
                    previous_value = _decoded(f.read())
                    f.seek(0)
                    f.truncate()
                    self._write_content(f, timeout, previous_value)
                    return True
                finally:
                    locks.unlock(f)
        except FileNotFoundError:
            return False
