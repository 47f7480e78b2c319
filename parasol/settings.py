"""Parasol settings, read from the environment with safe local defaults.

Every variable is read through a typed helper: a malformed value stops
start-up with a message naming the variable instead of failing later.

A setting of Parasol's own is named exactly like the environment variable it reads
(`PARASOL_IMPORT_MAX_ROWS` reads PARASOL_IMPORT_MAX_ROWS; `BERTSCORE_MODEL`,
`GENERATION_MODELS`, `REDIS_URL` likewise), so a name in a message is one a user can set;
derived values (`METRIC_OPTIONS`) carry no `PARASOL_` prefix. Settings that Django or a
library reads keep the name it looks up, fed by a variable of ours: `DEBUG`, `SECRET_KEY`,
`ALLOWED_HOSTS`, `CSRF_TRUSTED_ORIGINS` (DJANGO_*), `SESSION_COOKIE_SECURE`
(DJANGO_SECURE_COOKIES), `SECURE_*` (DJANGO_SSL_REDIRECT, DJANGO_HSTS_*), `DATABASES`,
`CACHES`, `LOGGING`, `REST_FRAMEWORK`, `AXES_*` (PARASOL_LOGIN_*) and `CELERY_*`
(PARASOL_VISIBILITY_TIMEOUT, PARASOL_BEAT_SCHEDULE, PARASOL_SWEEP_SECONDS).
tests/system/test_settings.py holds the module to this.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

# Plain data: the registry maps names to dotted paths, loading's EMBEDDED is a constant;
# neither imports a metric or a model library.
from metrics.backends import IN_PROCESS, MAX_ANSWER_BYTES, MAX_TEXT_CHARS, parse_backends
from metrics.loading import EMBEDDED
from metrics.registry import METRICS, default_metrics

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name, default):
    return os.environ.get(name, default)


def env_bool(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def env_int(name, default, minimum=None):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def env_list(name, default):
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_mapping(name, default, reserved=()):
    """``name=value`` items separated by commas, e.g. ``mistral=/models/Mistral-7B,llama=/models/llama.gguf``."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    mapping = {}
    for item in (item.strip() for item in raw.split(",")):
        key, equals, value = (part.strip() for part in item.partition("="))
        if not (equals and key and value):
            raise ImproperlyConfigured(f"{name} must be name=value items separated by commas, got {item!r}")
        if key in mapping or key in reserved:
            raise ImproperlyConfigured(f"{name} names {key!r} twice or redefines a built-in name")
        mapping[key] = value
    return mapping


def strong_secret_key(name, key):
    """Refuse a missing or guessable key (Django's own deploy-check criteria), naming the variable."""
    if not key:
        raise ImproperlyConfigured(
            f"{name} must be set when DJANGO_DEBUG is false: for a local run set DJANGO_DEBUG=true "
            f"(a development key stands in); in production set {name} to 50+ random characters"
        )
    if len(key) < 50 or len(set(key)) < 5 or key.startswith("django-insecure-") or key == DEVELOPMENT_SECRET_KEY:
        raise ImproperlyConfigured(
            f"{name} is too weak for production: use at least 50 random characters, e.g. the output of "
            "python -c 'import secrets; print(secrets.token_urlsafe(50))'"
        )
    return key


# Off unless asked for: DEBUG shows tracebacks and the URL map to anyone. The demo
# (`make demo`, `manage.py rundemo`) turns it on for itself.
DEBUG = env_bool("DJANGO_DEBUG", False)
DEVELOPMENT_SECRET_KEY = "parasol-local-development-key-not-for-production"
# Required with DEBUG off: 50+ random characters, else start-up stops naming it; with DEBUG on,
# a development key stands in when it is unset.
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "")
if DEBUG:
    SECRET_KEY = SECRET_KEY or DEVELOPMENT_SECRET_KEY
else:
    SECRET_KEY = strong_secret_key("DJANGO_SECRET_KEY", SECRET_KEY)

# Host names the site answers to, comma separated.
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
# Origins (https://host) from which forms may be posted when they differ from the host, comma separated.
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])
# Reverse proxies in front of the app that append to X-Forwarded-For; 0 (the default)
# trusts no header and uses the connection's address. Rate limits key on this address,
# and X-Forwarded-Proto is believed only from a declared proxy.
PARASOL_TRUSTED_PROXIES = env_int("PARASOL_TRUSTED_PROXIES", 0, minimum=0)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "axes",
    "campaigns",
    "annotation",
    "scoring",
    "generation",
    "reports",
    "demo",
]

MIDDLEWARE = [
    "parasol.middleware.RequestSizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "parasol.middleware.ContentSecurityPolicyMiddleware",
    "parasol.middleware.NoStoreApiMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "parasol.middleware.NulCharacterMiddleware",
    "parasol.middleware.CacheDownMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a lockout into its 429 response.
    "axes.middleware.AxesMiddleware",
]

# Login throttling (django-axes): after PARASOL_LOGIN_FAILURE_LIMIT wrong passwords for one
# username from one address, that pair is locked out for PARASOL_LOGIN_COOLOFF_MINUTES.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env_int("PARASOL_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("PARASOL_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "parasol.net.client_address"
# No banner on every manage.py command.
AXES_VERBOSE = False

# The task types a campaign may use: each name (stored in `Campaign.task_type`) mapped to the dotted path of
# its class, imported on first use (`campaigns.task_types`). Registering a type is this one entry
# (docs/development/add-task-type.md); a new campaign takes DEFAULT_TASK_TYPE. `manage.py check` stops on a
# path that does not import or a default that is not registered.
TASK_TYPES = {
    "similarity": "annotation.tasktypes.similarity.tasktype.Similarity",
    "criteria": "annotation.tasktypes.criteria.tasktype.Criteria",
    "spans": "annotation.tasktypes.spans.tasktype.Spans",
    "similarity+spans": "annotation.tasktypes.spans.tasktype.SimilaritySpans",
}
DEFAULT_TASK_TYPE = "similarity"

ROOT_URLCONF = "parasol.urls"
WSGI_APPLICATION = "parasol.wsgi.application"

# The project's templates, then each task type's own (annotation/tasktypes/<type>/templates/):
# a task type is one package, its judge partial and guidelines included.
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates", *sorted((BASE_DIR / "annotation" / "tasktypes").glob("*/templates"))],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# SQLite as an embedded database that holds a real campaign: the write-ahead log
# lets readers go on while one judge writes, NORMAL sync is safe under WAL, the
# busy timeout makes a writer wait its turn, and IMMEDIATE transactions take the
# write lock up front, so a transaction never has to upgrade from read to write
# (SQLite refuses that upgrade at once, busy timeout or not).
_sqlite_options = {
    "timeout": env_int("PARASOL_SQLITE_TIMEOUT", 30, minimum=1),
    "transaction_mode": "IMMEDIATE",
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
}


def sqlite_database(name):
    """The embedded database's settings, whichever way SQLite was chosen."""
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": name,
        "OPTIONS": dict(_sqlite_options),
        # A file, not shared-cache memory: only a file honours the busy
        # timeout, which concurrent-judge tests and the live server need.
        "TEST": {"NAME": env_str("SQLITE_TEST_PATH", str(BASE_DIR / "var" / f"test-db-{os.getpid()}.sqlite3"))},
    }


# SQLite by default; DATABASE_URL switches to PostgreSQL via psycopg (postgres://...)
# or names another SQLite file (sqlite:///path), which gets the same options as the default.
_database_url = env_str("DATABASE_URL", "")
if _database_url:
    try:
        _parsed = dj_database_url.parse(_database_url, conn_max_age=60)
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from None
    if _parsed["ENGINE"] == "django.db.backends.sqlite3":
        if _parsed["NAME"] in ("", ":memory:"):
            raise ImproperlyConfigured("DATABASE_URL must name an SQLite file (sqlite:///path), not memory")
        _parsed = _parsed | sqlite_database(_parsed["NAME"])
    DATABASES = {"default": _parsed}
else:
    # SQLITE_PATH: where the default SQLite file lives.
    DATABASES = {"default": sqlite_database(env_str("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")))}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Computed reports are cached on disk, so every web worker on the host shares
# them and a Redis outage does not take the report pages down: diskcache's Django
# backend (SQLite for the keys, a file per large value, stored pickled as it is:
# reading a live report's 400,000 pairs back is not slowed by inflating them). A live
# report keeps a few dozen entries per state (pairs, score columns, steps; superseded
# reports are deleted); past SIZE_LIMIT on disk the least recently stored go first.
CACHES = {
    "default": {
        "BACKEND": "diskcache.DjangoCache",
        "LOCATION": env_str("PARASOL_CACHE_DIR", str(BASE_DIR / "var" / "cache")),
        "TIMEOUT": 24 * 3600,
        "DATABASE_TIMEOUT": 1.0,  # seconds a writer waits for another (diskcache's default, 10 ms, drops reads)
        "OPTIONS": {"size_limit": 4 * 2**30},
    }
}
# Web and workers on separate machines share computed reports through Redis instead of a folder.
if env_str("PARASOL_CACHE_URL", ""):
    CACHES["default"] = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": env_str("PARASOL_CACHE_URL", ""),
        "TIMEOUT": 24 * 3600,
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
# Everything a judge sees exists in English and French; the browser's
# preference picks one and a switch on every judge page changes it.
LANGUAGES = [("en", "English"), ("fr", "French")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Serve straight from static/ while developing; production runs collectstatic.
WHITENOISE_USE_FINDERS = DEBUG

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "campaigns-list-campaigns"
LOGOUT_REDIRECT_URL = "login"

SESSION_COOKIE_HTTPONLY = True
# Production (DEBUG off) is served over HTTPS behind a proxy: secure cookies,
# HSTS and the redirect are on unless explicitly turned off.
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
# Preloading is hard to undo (browsers ship the list): only on request.
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
# check --deploy warns about preload (W021) whenever it is off; off is a deliberate default here.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
# Without a declared proxy the header is the client's to forge, so it is not read.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if PARASOL_TRUSTED_PROXIES else None
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Redis is the Celery broker and result store.
REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", REDIS_URL)
CELERY_TASK_DEFAULT_QUEUE = "cpu"
CELERY_TASK_ACKS_LATE = True
# Results are only kept for the tasks that ask (the sweep reports its signature);
# subscribing to every task's result from inside workers only costs connections.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Run tasks in the calling process instead of queueing them (no worker needed; slow requests).
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# Fail fast when Redis is down: judging must never wait on the broker.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
# A task a worker took but has not acknowledged (acks late) goes to another worker after the
# visibility timeout: it must exceed the longest task (an LLM generation batch), or that task runs twice.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "socket_connect_timeout": 2,
    "socket_timeout": 5,
    "visibility_timeout": env_int("PARASOL_VISIBILITY_TIMEOUT", 3600, minimum=60),
}
# A worker node that died as a whole (SIGKILL, out of memory, a machine lost) leaves its tasks
# unacknowledged in Redis until the visibility timeout (an hour). Each worker says it is alive
# every third of this many seconds; the tasks of one silent for longer are put back in their
# queue at once (parasol/queues.py). Far below the visibility timeout, above any pause of a busy worker.
PARASOL_WORKER_LOST_SECONDS = env_int("PARASOL_WORKER_LOST_SECONDS", 60, minimum=3)
# Every task's queue is decided in one place (scoring/routing.py): reports, training and
# generation have queues of their own, so no scoring batch is ever ahead of them.
CELERY_TASK_ROUTES = ("scoring.routing.route",)
# Beat's record of when each periodic task last ran: under var/ (ignored), never in the tree.
CELERY_BEAT_SCHEDULE_FILENAME = env_str("PARASOL_BEAT_SCHEDULE", str(BASE_DIR / "var" / "celerybeat-schedule"))
CELERY_BEAT_SCHEDULE = {
    "sweep-missing-scores": {
        "task": "scoring.tasks.sweep_all",
        # Seconds between two sweeps that queue whatever scores are missing (e.g. pairs created while Redis was down).
        "schedule": env_int("PARASOL_SWEEP_SECONDS", 300, minimum=10),
    },
}

# Metrics that score every pair, comma separated; by default every registered metric but the
# opt-in ones (`opt_in` in metrics/registry.py): the LLM oracle metrics generate 5 to 10
# replies per pair (0.02-0.06 pairs/s on CPU with the embedded model, bench/oracle.py); pivot_f1
# and pem need a phrase table and a fitted model; paratag a detector trained on a campaign's
# taggings first (manage.py train_span_detector). Each metric's queue (cpu or gpu) is its
# registry entry's.
PARASOL_METRICS = env_list("PARASOL_METRICS", default_metrics())
_unknown_metrics = sorted(set(PARASOL_METRICS) - set(METRICS))
if _unknown_metrics:
    raise ImproperlyConfigured(f"PARASOL_METRICS names unknown metrics: {', '.join(_unknown_metrics)}")
# Pairs per scoring task: LLM metrics (queue gpu) take seconds per batch, so small
# batches keep progress and retries fine-grained; the other metrics get large ones,
# where per-task costs (queueing, one query, one insert) would otherwise dominate.
PARASOL_SCORING_BATCH_SIZE = env_int("PARASOL_SCORING_BATCH_SIZE", 64, minimum=1)
PARASOL_CPU_SCORING_BATCH_SIZE = env_int("PARASOL_CPU_SCORING_BATCH_SIZE", 1000, minimum=1)
# Fair shares (scoring/dispatch.py): batches of one campaign waiting or running at once in each
# queue, its metrics taken in turn; each that ends queues the campaign's next. Another campaign's
# new batch waits behind at most this many batches of each campaign already being scored.
PARASOL_SCORING_BATCHES_PER_CAMPAIGN = env_int("PARASOL_SCORING_BATCHES_PER_CAMPAIGN", 2, minimum=1)
# Seconds a batch should take: batches are sized from each metric's measured speed (never above
# the sizes above). It is the queue's time slice: another campaign's new batch waits behind at
# most BATCHES_PER_CAMPAIGN batches of this length per campaign being scored.
PARASOL_SCORING_BATCH_SECONDS = env_int("PARASOL_SCORING_BATCH_SECONDS", 30, minimum=1)
# Batches of one generation run waiting or running at once (generation/tasks.py): runs of
# several researchers take turns on the generation workers, batch by batch.
PARASOL_GENERATION_BATCHES_PER_RUN = env_int("PARASOL_GENERATION_BATCHES_PER_RUN", 2, minimum=1)
# Seconds a generation batch should take: its sources are sized from the model's measured speed
# (never above the run's batch_size), so the run's page counts outputs every few seconds.
PARASOL_GENERATION_BATCH_SECONDS = env_int("PARASOL_GENERATION_BATCH_SECONDS", 20, minimum=1)
# BERTScore's model and layer, shared by ParaScore. The paper's values need bert-base-uncased
# (layer 9) in the local Hugging Face cache or a local directory; the default is the packaged
# all-MiniLM-L6-v2 (layer 6). Read here so a bad layer stops start-up; scoring.service hands
# them to the scorers (metrics, Django-free, reads the same variables when used alone).
BERTSCORE_MODEL = env_str("BERTSCORE_MODEL", "").strip() or EMBEDDED
BERTSCORE_NUM_LAYERS = env_int("BERTSCORE_NUM_LAYERS", None, minimum=1)
METRIC_OPTIONS = {
    name: {"model": BERTSCORE_MODEL, "num_layers": BERTSCORE_NUM_LAYERS} for name in ("bertscore", "parascore")
}
# LLM backends by name (docs/deployment/llm-servers.md): a JSON object of names to settings,
# e.g. {"lab-vllm": {"base_url": "http://10.0.0.5:8000/v1", "model": "mistral-7b-instruct",
# "api_key_env": "LAB_VLLM_KEY", "tokenizer": "/models/Mistral-7B-Instruct"}}. "in-process"
# (transformers in the worker, the embedded model) is always there. Campaigns name a backend
# per LLM metric; PARASOL_LLM_BACKEND is the default. Names only: no URL or key reaches a page.
# Every answer of an LLM server is read up to PARASOL_LLM_MAX_ANSWER_BYTES (past it, that request
# fails: its pair, or its generation candidate) and its text kept up to PARASOL_LLM_MAX_TEXT_CHARS
# characters (cut, marked with an ellipsis). docs/operations/llm-servers.md, "Bounded requests".
PARASOL_LLM_MAX_ANSWER_BYTES = env_int("PARASOL_LLM_MAX_ANSWER_BYTES", MAX_ANSWER_BYTES, minimum=1024)
PARASOL_LLM_MAX_TEXT_CHARS = env_int("PARASOL_LLM_MAX_TEXT_CHARS", MAX_TEXT_CHARS, minimum=100)
try:
    PARASOL_LLM_BACKENDS = parse_backends(
        env_str("PARASOL_LLM_BACKENDS", ""),
        max_answer_bytes=PARASOL_LLM_MAX_ANSWER_BYTES,
        max_text_chars=PARASOL_LLM_MAX_TEXT_CHARS,
    )
except ValueError as error:
    raise ImproperlyConfigured(str(error)) from None
PARASOL_LLM_BACKEND = env_str("PARASOL_LLM_BACKEND", IN_PROCESS).strip() or IN_PROCESS
if PARASOL_LLM_BACKEND not in PARASOL_LLM_BACKENDS:
    raise ImproperlyConfigured(
        f"PARASOL_LLM_BACKEND names {PARASOL_LLM_BACKEND!r}, not one of PARASOL_LLM_BACKENDS: "
        + ", ".join(PARASOL_LLM_BACKENDS)
    )
# A scoring or generation batch whose LLM server does not answer waits and is retried this many
# times, the first after PARASOL_LLM_BACKEND_WAIT_SECONDS, each wait doubled up to 5 minutes (288
# is about a day), before it is given up; the periodic sweep queues scoring again anyway.
PARASOL_LLM_BACKEND_WAIT_RETRIES = env_int("PARASOL_LLM_BACKEND_WAIT_RETRIES", 288, minimum=0)
PARASOL_LLM_BACKEND_WAIT_SECONDS = env_int("PARASOL_LLM_BACKEND_WAIT_SECONDS", 10, minimum=1)
# A pair a metric fails to score (a server's refusal or unusable answer, a non-finite score) is
# tried this many times in all, then given up: the sweep leaves it, the campaign's page says why
# (scoring.models.ScoreFailure; `manage.py score --retry-failed` tries it again).
PARASOL_SCORING_PAIR_TRIES = env_int("PARASOL_SCORING_PAIR_TRIES", 3, minimum=1)
# Queue the scoring of new pairs as soon as they are committed (import, API, generation run).
PARASOL_SCORE_ON_CREATE = env_bool("PARASOL_SCORE_ON_CREATE", True)
# PEM (issue 26): fitted PEM models are written under this directory (`manage.py fit_pem`), and
# the criteria report joins PEM's fixed-score control systems to the judges' mean (PEM 5.2)
# unless this is false. pivot_f1 reads PARASOL_PEM_PHRASE_TABLE and pem reads PARASOL_PEM_MODEL
# themselves (metrics, Django-free); both metrics are opt-in (PARASOL_METRICS).
PARASOL_PEM_MODEL_DIR = env_str("PARASOL_PEM_MODEL_DIR", str(BASE_DIR / "var" / "media" / "pem"))
PARASOL_PEM_CONTROLS_IN_REFERENCE = env_bool("PARASOL_PEM_CONTROLS_IN_REFERENCE", True)
# Reports of more pairs than this are computed by a worker while the page shows progress.
PARASOL_REPORT_INLINE_MAX_PAIRS = env_int("PARASOL_REPORT_INLINE_MAX_PAIRS", 20_000, minimum=0)
# ... and so are reports whose work grows with something else than pairs: many systems (each
# compared with each), or many groups (corpora, generators, templates: a table row each).
PARASOL_REPORT_INLINE_MAX_SYSTEMS = env_int("PARASOL_REPORT_INLINE_MAX_SYSTEMS", 40, minimum=0)
PARASOL_REPORT_INLINE_MAX_SYSTEM_COMPARISONS = env_int("PARASOL_REPORT_INLINE_MAX_SYSTEM_COMPARISONS", 100, minimum=0)
PARASOL_REPORT_INLINE_MAX_GROUPS = env_int("PARASOL_REPORT_INLINE_MAX_GROUPS", 100, minimum=0)
# The pairwise system table compares at most this many pairs of systems (those with the most
# labelled pairs); a note in the report names the systems left out.
PARASOL_REPORT_MAX_SYSTEM_COMPARISONS = env_int("PARASOL_REPORT_MAX_SYSTEM_COMPARISONS", 1000, minimum=1)

# Generation: the chat models a run may name, besides the embedded SmolLM2 ("embedded").
# Names map to local directories, .gguf files or hub names already cached; researchers
# pick a name and never give a server path.
GENERATION_MODELS = env_mapping("GENERATION_MODELS", {}, reserved=("embedded",))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "parasol.authentication.ThrottledTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    # JSON only: a form cannot say null, a list or a number, so a form body could not state what
    # the schema publishes (any other type is refused with 415).
    "DEFAULT_PARSER_CLASSES": ["parasol.parsers.JSONParser"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "PAGE_SIZE": 100,
    "DEFAULT_PAGINATION_CLASS": "parasol.pagination.CappedLimitOffsetPagination",
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        # Requests per period (second, minute, hour or day) to the API: anonymous callers, then researchers.
        "anon": env_str("PARASOL_API_ANON_RATE", "60/minute"),
        "user": env_str("PARASOL_API_USER_RATE", "1200/minute"),
    },
}
# Wrong API tokens one address may send per window before it gets 429 (guessing keys).
PARASOL_API_TOKEN_FAILURES = env_int("PARASOL_API_TOKEN_FAILURES", 20, minimum=1)
PARASOL_API_TOKEN_FAILURE_WINDOW_SECONDS = env_int("PARASOL_API_TOKEN_FAILURE_WINDOW_SECONDS", 600, minimum=1)
SPECTACULAR_SETTINGS = {
    "TITLE": "Parasol API",
    "DESCRIPTION": "Paraphrase evaluation campaigns: pairs, judgments and exports.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema maps every endpoint: researchers only, like the API itself.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAdminUser"],
    # OpenAPI 3.1: its schemas are JSON Schema, which can state rules 3.0 cannot (names of metadata keys).
    "OAS_VERSION": "3.1.0",
    # Requests and responses as separate components: read-only fields are not asked for, write-only not promised.
    "COMPONENT_SPLIT_REQUEST": True,
    # The registered metrics are one choice set wherever a field names a metric (predictor, selection).
    "ENUM_NAME_OVERRIDES": {"MetricEnum": "metrics.registry.METRIC_NAMES"},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "parasol.schema.add_error_responses",
    ],
}

# Corpus import limits: larger files are refused whole, with a message.
PARASOL_IMPORT_MAX_BYTES = env_int("PARASOL_IMPORT_MAX_BYTES", 20 * 1024 * 1024, minimum=1)
PARASOL_IMPORT_MAX_ROWS = env_int("PARASOL_IMPORT_MAX_ROWS", 100_000, minimum=1)
# Per row: a sentence longer than this is refused (a judge reads it; the page highlights it),
# and so are rows with too many columns or too much metadata (a wide file multiplies storage).
PARASOL_MAX_SENTENCE_CHARS = env_int("PARASOL_MAX_SENTENCE_CHARS", 5000, minimum=1)
PARASOL_IMPORT_MAX_COLUMNS = env_int("PARASOL_IMPORT_MAX_COLUMNS", 50, minimum=2)
PARASOL_MAX_METADATA_CHARS = env_int("PARASOL_MAX_METADATA_CHARS", 20_000, minimum=2)
# Per campaign: each distinct metadata key is a column of every export and report table, so
# keys spread over rows (few per row, different in each) are capped across the campaign too.
PARASOL_METADATA_MAX_KEYS = env_int("PARASOL_METADATA_MAX_KEYS", 200, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = PARASOL_IMPORT_MAX_BYTES + 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = PARASOL_IMPORT_MAX_BYTES + 1024 * 1024
# Any other request (judge answers, researcher forms) is small: a bigger body is refused
# from its Content-Length before it is read, so no one can fill the disk anonymously.
PARASOL_MAX_REQUEST_BYTES = env_int("PARASOL_MAX_REQUEST_BYTES", 256 * 1024, minimum=1024)

# A pending assignment reserves its pair for this long; after that an
# abandoned assignment no longer counts towards the pair's overlap.
PARASOL_ASSIGNMENT_RESERVATION_MINUTES = env_int("PARASOL_ASSIGNMENT_RESERVATION_MINUTES", 60, minimum=1)
# A judge admitted to training has this many real pairs reserved first, so
# nobody trains and then finds nothing left to label.
PARASOL_PAIRS_RESERVED_BEFORE_TRAINING = env_int("PARASOL_PAIRS_RESERVED_BEFORE_TRAINING", 5, minimum=1)
# A judge who has not answered any real pair yet holds a pair (or a seat under the
# campaign's judge cap) only this long: idle joiners cannot starve a campaign.
PARASOL_IDLE_RESERVATION_MINUTES = env_int("PARASOL_IDLE_RESERVATION_MINUTES", 10, minimum=1)
# Answers one judge may give per minute; more is a script flooding the campaign, not reading.
PARASOL_MAX_ANSWERS_PER_MINUTE = env_int("PARASOL_MAX_ANSWERS_PER_MINUTE", 30, minimum=1)
# New judges one address may start per campaign per hour (joining is anonymous).
PARASOL_JOINS_PER_HOUR = env_int("PARASOL_JOINS_PER_HOUR", 30, minimum=1)
# How long a judge's cookie (which resumes their work on this browser) lasts.
PARASOL_JUDGE_COOKIE_AGE_DAYS = env_int("PARASOL_JUDGE_COOKIE_AGE_DAYS", 90, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    # DEBUG, INFO, WARNING or ERROR: the least severe record written to the console.
    "root": {"handlers": ["console"], "level": env_str("PARASOL_LOG_LEVEL", "INFO")},
}
