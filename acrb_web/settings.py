"""Settings read from the environment, with defaults that run on one machine with no servers.

Defaults: SQLite in var/, a Celery broker on the local filesystem (kombu's filesystem
transport), media in var/media. For a multi-machine deployment set DATABASE_URL (PostgreSQL)
and CELERY_BROKER_URL (Redis or RabbitMQ). Every variable is listed in docs/deployment.md.
"""

import os
from pathlib import Path

import dj_database_url
from csp.constants import NONCE
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("ACRB_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


def env_int(name: str, default: int) -> int:
    """A whole number ≥ 0 from the environment (``default`` when unset)."""
    return _env_number(name, default, int, "a whole number")


def env_float(name: str, default: float) -> float:
    """A number ≥ 0 from the environment (``default`` when unset)."""
    return _env_number(name, default, float, "a number")


def _env_number(name, default, kind, wanted):
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = kind(raw.strip())
    except ValueError:
        value = None
    if value is None or not 0 <= value < float("inf"):
        # SystemExit, not ImproperlyConfigured: a value the operator typed is theirs to fix, so
        # every entry point (manage.py, the web server, a worker) stops with this one line
        # instead of a traceback through Django's settings import.
        raise SystemExit(f"{name} must be {wanted} ≥ 0, got {raw!r} (docs/deployment.md)")
    return value


# Published in this repository: signs nothing outside DEBUG (secret_key below).
BUILT_IN_SECRET_KEY = "insecure-local-only-set-DJANGO_SECRET_KEY"


def secret_key(environ, *, debug: bool, var_dir: Path) -> str:
    """DJANGO_SECRET_KEY; without it, the built-in key in DEBUG, else a random key made once
    and kept in ``var_dir/secret_key`` (one machine). The built-in key with DEBUG off is
    refused: anyone could sign sessions and password-reset links with it."""
    given = environ.get("DJANGO_SECRET_KEY", "").strip()
    if given == BUILT_IN_SECRET_KEY and not debug:
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is the built-in key, which is public; set a secret of your own "
            "(python -c 'import secrets; print(secrets.token_urlsafe(50))') or DJANGO_DEBUG=1"
        )
    if given:
        return given
    if debug:
        return BUILT_IN_SECRET_KEY
    path = var_dir / "secret_key"
    if not path.exists():
        import secrets

        var_dir.mkdir(parents=True, exist_ok=True)
        try:
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
                f.write(secrets.token_urlsafe(50))
        except FileExistsError:  # another process made it first
            pass
    return path.read_text(encoding="utf-8").strip()


DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = secret_key(os.environ, debug=DEBUG, var_dir=VAR_DIR)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from our static files (/api/docs/)
    "django_htmx",
    "template_partials",
    "axes",
    "csp",
    "annotations",
    "scoring",
    "scoring.reflect",
    "generation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # The annotator's language on survey and consent pages; English elsewhere (docs/annotation.md).
    "annotations.survey.language.SurveyLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Out-of-range ids and values the database refuses: 404/400, never 500.
    "acrb_web.middleware.HostileInputMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its 429 answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "acrb_web.urls"
WSGI_APPLICATION = "acrb_web.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.template.context_processors.i18n",
                "django.contrib.messages.context_processors.messages",
                "csp.context_processors.nonce",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'acrb.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Twelve annotators writing at once: take the write lock when a transaction starts
    # (IMMEDIATE) and wait for it, instead of failing with "database is locked" on upgrade.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE"}
    )
    # A file, not memory, so that a Celery worker process started by a test sees the test data.
    # One file per test process, so parallel test sessions do not share a database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-acrb-{os.getpid()}.sqlite3")}
    # models.W040: SQLite has no covering indexes, so it builds assignment_queue_covering without
    # its INCLUDE columns (a plain index, still used). The index stays for PostgreSQL, where the
    # progress count is an index-only scan; the warning says nothing a SQLite user can act on.
    SILENCED_SYSTEM_CHECKS = ["models.W040"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# django-axes first: it refuses a locked-out login before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "annotations.common.auth.UserWithAnnotatorBackend",
]
# Sessions are read from the cache and written through to the database: a survey request then
# needs no session query. Several app servers must share the cache (ACRB_CACHE_URL), or a
# logout on one would not end the cached session on another.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
LOGIN_URL = "login"

# --- security (docs/deployment.md#security) ---------------------------------------------------
# Login throttling: after AXES_FAILURE_LIMIT failed logins in a row, that username is locked
# (from any address) and that address is locked (for any username) until the cool-off ends or
# staff run `manage.py axes_reset`. A successful login resets the count.
AXES_FAILURE_LIMIT = env_int("ACRB_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = env_float("ACRB_LOGIN_COOLOFF_HOURS", 1.0)
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
# Behind a reverse proxy the client address is in X-Forwarded-For; trust it only when told to.
AXES_IPWARE_META_PRECEDENCE_ORDER = (
    ["HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"]
    if env_bool("ACRB_BEHIND_PROXY", False)
    else ["REMOTE_ADDR"]
)

# Content-Security-Policy: scripts and styles only from our own origin (htmx is vendored under
# static/); the few inline <style> blocks carry the per-request nonce. No inline event
# handlers, no eval. tests/test_security.py checks the templates stay within this.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", NONCE],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# Served over HTTPS (ACRB_HTTPS=1, the production setting): cookies only over TLS, HSTS, and
# plain-HTTP requests redirected. Off by default so `make demo` works on http://127.0.0.1.
ACRB_HTTPS = env_bool("ACRB_HTTPS", False)
SESSION_COOKIE_SECURE = ACRB_HTTPS
CSRF_COOKIE_SECURE = ACRB_HTTPS
SECURE_SSL_REDIRECT = ACRB_HTTPS and env_bool("ACRB_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("ACRB_HSTS_SECONDS", 31536000) if ACRB_HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = ACRB_HTTPS and env_bool("ACRB_HSTS_INCLUDE_SUBDOMAINS", False)
if ACRB_HTTPS and env_bool("ACRB_BEHIND_PROXY", False):
    # The proxy terminates TLS and says so in this header (it must overwrite a client's copy).
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
LOGIN_REDIRECT_URL = "annotations:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
# The languages the survey and consent pages are translated into (locale/<code>/LC_MESSAGES);
# staff pages are English only. Adding one: docs/annotation.md#the-surveys-language.
LANGUAGES = [("en", "English"), ("fr", "Français")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
# Served by WhiteNoise from the app itself (htmx included): no CDN, works offline.
WHITENOISE_USE_FINDERS = True
# Media are never served by a static route: every image goes through a permission-checked view.
MEDIA_ROOT = Path(os.environ.get("ACRB_MEDIA_ROOT", VAR_DIR / "media"))
MEDIA_URL = "/media-not-served-directly/"
STORAGE_BACKENDS = {
    "filesystem": "django.core.files.storage.FileSystemStorage",
    "s3": "storages.backends.s3.S3Storage",  # the `s3` extra: pip install -e '.[s3]'
}
# S3-compatible object storage (AWS, MinIO, Ceph, R2...) through django-storages; credentials
# come from boto3's own variables (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) or the host role.
S3_OPTION_VARIABLES = {
    "bucket_name": "ACRB_S3_BUCKET",
    "endpoint_url": "ACRB_S3_ENDPOINT_URL",
    "region_name": "ACRB_S3_REGION",
    "location": "ACRB_S3_PREFIX",
}


def media_storage(environ) -> dict:
    """The default storage from ACRB_STORAGE_BACKEND: "filesystem" (MEDIA_ROOT, a local or
    network folder), "s3" (ACRB_S3_* variables), or any storage class's dotted path."""
    name = environ.get("ACRB_STORAGE_BACKEND", "filesystem")
    backend = STORAGE_BACKENDS.get(name, name)
    if backend != STORAGE_BACKENDS["s3"]:
        return {"BACKEND": backend}
    if not environ.get("ACRB_S3_BUCKET"):
        raise ImproperlyConfigured("ACRB_STORAGE_BACKEND=s3 needs ACRB_S3_BUCKET")
    options = {key: environ[var] for key, var in S3_OPTION_VARIABLES.items() if environ.get(var)}
    # Images are private: never public-read, and served only through the permission-checked
    # view, which reads them from the bucket (no pre-signed links handed out).
    return {
        "BACKEND": backend,
        "OPTIONS": {**options, "default_acl": None, "file_overwrite": False},
    }


STORAGES = {
    "default": media_storage(os.environ),
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Limits on what an import accepts (bytes and pixels); larger files are rejected with a message.
ACRB_MAX_IMAGE_BYTES = env_int("ACRB_MAX_IMAGE_BYTES", 25 * 1024 * 1024)
ACRB_MAX_IMAGE_PIXELS = env_int("ACRB_MAX_IMAGE_PIXELS", 40_000_000)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# The metrics cache is keyed by a fingerprint of the study's data, so it is never stale; a shared
# cache (e.g. Redis via CACHE_URL-style settings) only saves recomputation across processes.
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["ACRB_CACHE_URL"],
        }
        if os.environ.get("ACRB_CACHE_URL")
        else {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    )
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.BasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "annotations.api.renderers.CSPBrowsableAPIRenderer",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # DRF's limit/offset with a largest page and offset (?limit=999… was a 500).
    "DEFAULT_PAGINATION_CLASS": "annotations.api.pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 500,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ACRB audit API",
    "DESCRIPTION": "Read-only access to studies, items, annotations and validated metrics.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema lists every staff endpoint: staff only, like the API it describes.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAdminUser"],
    # The readable docs page (/api/docs/, staff only like the schema): Swagger UI from the
    # drf-spectacular-sidecar package's static files, never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
}

CELERY_DATA_DIR = VAR_DIR / "celery"
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("queue", "processed", "control"):
        (CELERY_DATA_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_DATA_DIR / "queue"),
        "data_folder_out": str(CELERY_DATA_DIR / "queue"),
        "processed_folder": str(CELERY_DATA_DIR / "processed"),
        "store_processed": False,
        "control_folder": str(CELERY_DATA_DIR / "control"),
    }
else:
    # Redis redelivers a task whose worker died once this many seconds pass unacknowledged;
    # it must exceed the longest task (a scoring or generation batch).
    # The sweep that gives those messages back runs every unacked_restore_interval seconds
    # (kombu's default scans only every tenth sweep, i.e. every 100 s).
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 7200),
        "unacked_restore_interval": 10,
        "unacked_restore_throttle": 1,
    }
# A broker or database restart is survived, not fatal: workers reconnect to the broker
# forever (also when it is down at start), publishing a task waits out a broker restart of up
# to about a minute, and tasks retry on database connection errors (annotations.common.jobs).
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 30,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 2,
}
# Progress and results live in our own BackgroundJob rows; Celery needs no result store.
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
# Model work (judges, generators) runs in its own queue, served by a solo/threads worker.
CELERY_TASK_ROUTES = {
    "scoring.tasks.*": {"queue": "gpu"},
    "generation.tasks.*": {"queue": "gpu"},
}
# Work that only calls HTTP APIs (image APIs, OpenAI-compatible judges) goes to this queue; a
# deployment with CPU worker machines sets it to "api" and runs them with -Q api. The default
# keeps every model task on "gpu", where one worker serves both (docs/deployment.md).
ACRB_API_QUEUE = os.environ.get("ACRB_API_QUEUE", "gpu")
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True

# Model backends, configured by name (never by code edits). Each maps a name to a config dict
# (architecture / model id or local folder / endpoint, device, thresholds...). They are read from
# the YAML file named by ACRB_BACKENDS_FILE (see docs/backends.md); empty by default.
ACRB_BACKENDS_FILE = os.environ.get("ACRB_BACKENDS_FILE", "")
ACRB_JUDGES: dict = {}
ACRB_GENERATORS: dict = {}
ACRB_VLM_MODELS: dict = {}
ACRB_REWRITERS: dict = {}  # boundary rephrasing of base prompts (docs/generation.md)
if ACRB_BACKENDS_FILE:
    import yaml

    with open(ACRB_BACKENDS_FILE, encoding="utf-8") as _handle:
        _backends = yaml.safe_load(_handle) or {}
    ACRB_JUDGES = _backends.get("judges", {})
    ACRB_GENERATORS = _backends.get("generators", {})
    ACRB_VLM_MODELS = _backends.get("vlm_models", {})
    ACRB_REWRITERS = _backends.get("rewriters", {})

# Survey: answers faster than this many seconds after the item was served are flagged.
ACRB_DEFAULT_MIN_SECONDS_PER_ITEM = env_float("ACRB_MIN_SECONDS_PER_ITEM", 1.5)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # A 4xx is one line; tracebacks only for 5xx (acrb_web/logging.py).
    "filters": {"client_errors_on_one_line": {"()": "acrb_web.logging.ClientErrorsOnOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "django.request": {"filters": ["client_errors_on_one_line"]},
        "django.security": {"filters": ["client_errors_on_one_line"]},
    },
    "root": {"handlers": ["console"], "level": os.environ.get("ACRB_LOG_LEVEL", "WARNING")},
}

STATIC_ROOT.mkdir(parents=True, exist_ok=True)
