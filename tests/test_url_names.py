"""URL names read `<app>-<verb>-<noun>`, the app being the one whose urls module defines the name.

Exceptions, each a name another library looks up or makes: the project's own routes in
parasol/urls.py (`login` and `logout`, the names Django's auth views and LOGIN_URL use,
`api-schema`), Django's `set_language` and admin (namespaced), and the REST API's routes,
which DRF's router names `<basename>-<action>` with basename `api-<resource>`, plus `api-root`.
"""

import re

from django.urls import URLResolver, get_resolver

VERBS = (
    "adopt",
    "ask",
    "cancel",
    "create",
    "download",
    "draw",
    "edit",
    "export",
    "list",
    "preview",
    "record",
    "resume",
    "select",
    "show",
    "toggle",
    "train",
    "upload",
)
PROJECT_NAMES = {"login", "logout", "api-schema", "set_language"}
API_NAME = re.compile(r"^api-(root|[a-z]+-[a-z]+)$")


def named_urls(resolver, module):
    """(module that defines it, name, route) for every named URL under `resolver`; namespaced includes left out."""
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            if pattern.namespace is None:
                inner = pattern.urlconf_module
                yield from named_urls(pattern, getattr(inner, "__name__", module))
        elif pattern.name:
            yield module, pattern.name, str(pattern.pattern)


def test_every_page_name_starts_with_its_app_then_a_verb_and_a_noun():
    misnamed = []
    found = list(named_urls(get_resolver(), "parasol.urls"))
    for module, name, route in found:
        app = module.split(".")[0]
        if module.endswith("api_urls") or route.startswith("^"):
            ok = API_NAME.match(name) is not None
        elif module == "parasol.urls" or module.startswith("django."):
            ok = name in PROJECT_NAMES
        else:
            ok = re.fullmatch(rf"{app}-({'|'.join(VERBS)})-[a-z0-9]+(-[a-z0-9]+)*", name) is not None
        if not ok:
            misnamed.append(f"{name} (in {module})")
    assert {module.split(".")[0] for module, _, _ in found} >= {"annotation", "campaigns", "generation", "reports"}
    assert misnamed == []


def test_a_name_means_one_page():
    pages = {}
    for module, name, _route in named_urls(get_resolver(), "parasol.urls"):
        pages.setdefault(name, set()).add(module)
    assert {name: modules for name, modules in pages.items() if len(modules) > 1} == {}
