"""The file cache keeps what compresses well compressed and the rest as it is, and reads both back."""

import numpy as np
from django.core.cache.backends.filebased import FileBasedCache

from parasol.filecache import FileCache


def stored_bytes(cache, key):
    with open(cache._key_to_file(key), "rb") as handle:  # noqa: SLF001 - the file the key is stored in
        return handle.read()


def test_floats_are_stored_as_they_are_and_text_compressed(tmp_path):
    cache = FileCache(str(tmp_path), {})
    floats = np.random.default_rng(0).random(100_000)
    text = "the same sentence again " * 10_000
    cache.set("floats", floats)
    cache.set("text", text)
    assert np.array_equal(cache.get("floats"), floats) and cache.get("text") == text
    assert len(stored_bytes(cache, "floats")) > floats.nbytes  # as it is (the expiry, then the pickle)
    assert len(stored_bytes(cache, "text")) < len(text) / 10


def test_a_large_value_is_stored_as_it_is_even_if_it_compresses(tmp_path):
    cache = FileCache(str(tmp_path), {})
    text = "the same sentence again " * 400_000  # 9.6 MB
    cache.set("pairs", text)
    assert cache.get("pairs") == text and len(stored_bytes(cache, "pairs")) > len(text)


def test_entries_of_djangos_own_file_cache_read_back_and_touch_keeps_a_value(tmp_path):
    FileBasedCache(str(tmp_path), {}).set("old", {"written": "by Django"})
    cache = FileCache(str(tmp_path), {})
    assert cache.get("old") == {"written": "by Django"}
    cache.set("raw", np.arange(50_000, dtype=float))
    assert cache.touch("raw", 60) and cache.touch("old", 60)
    assert np.array_equal(cache.get("raw"), np.arange(50_000, dtype=float))
    assert cache.get("old") == {"written": "by Django"}
    assert cache.get("missing", "default") == "default"
