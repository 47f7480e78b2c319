"""What comes back from an LLM server, made safe where it enters: strict JSON, finite numbers, clean text.

A server is an outside system (STYLE.md, 17): its answer is checked like a judge's form before
any of it reaches a score, the database, a page or a file. Django-free, as the metrics are:
`backends.ServerClient` applies it to every answer, `base.Metric` to every score and detail.
"""

import json
import math
import numbers
import re

# NUL (PostgreSQL refuses it in text), C0 and C1 controls but tab, line feed and carriage
# return, and lone UTF-16 surrogates (no UTF-8 encoder takes one: a file or a page would end there).
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
CUT_MARK = "…"


class UntrustedAnswer(ValueError):
    """An answer that cannot be used as it is (malformed JSON, a non-finite number, the wrong shape)."""


def clean_text(text, limit):
    """``text`` without NUL, control characters or lone surrogates (each becomes U+FFFD), cut to ``limit``
    characters (the cut marked with an ellipsis); a non-string is refused."""
    if not isinstance(text, str):
        raise UntrustedAnswer(f"a text was expected, got {type(text).__name__}")
    text = _UNSAFE.sub("\ufffd", text)
    return text if len(text) <= limit else text[: max(0, limit - len(CUT_MARK))] + CUT_MARK


def shown(text, limit=300):
    """A server's message as a page or a log may show it: cleaned and cut (escaping is the template's)."""
    return clean_text(text if isinstance(text, str) else str(text), limit)


def finite(value, what="a number"):
    """``value`` as a finite float; UntrustedAnswer for NaN, ±inf, or what is not a number at all."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise UntrustedAnswer(f"{what} is not a number: {shown(repr(value), 60)}") from None
    value = float(value)
    if not math.isfinite(value):
        raise UntrustedAnswer(f"{what} is not finite ({value})")
    return value


def _refuse_constant(name):
    raise UntrustedAnswer(f"the JSON holds {name}, which JSON does not allow")


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses to inf
        raise UntrustedAnswer(f"the JSON holds a number out of range ({text[:40]})")
    return value


def parse_json(raw: bytes):
    """Strict JSON: NaN, Infinity and numbers that overflow a float are refused, as is what is not UTF-8."""
    try:
        return json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except UntrustedAnswer:
        raise
    except (ValueError, RecursionError) as error:  # JSONDecodeError, UnicodeDecodeError, too many digits
        raise UntrustedAnswer(f"the answer is not valid JSON ({shown(str(error), 120)})") from None


def clean_json(value, limit, where="details"):
    """A JSON-able value with every string cleaned (`clean_text`) and every number checked finite; keys too."""
    if isinstance(value, str):
        return clean_text(value, limit)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):  # float and numpy's floats
        return finite(float(value), f"a number in the {where}")
    if isinstance(value, dict):
        return {clean_text(str(key), limit): clean_json(item, limit, where) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(item, limit, where) for item in value]
    return clean_text(str(value), limit)
