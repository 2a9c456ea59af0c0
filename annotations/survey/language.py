"""The language of the pages annotators see (docs/annotation.md#the-surveys-language).

Survey, consent and log-in pages are shown in the annotator's language: the preference saved
on their profile (the switcher on those pages), else the language cookie the switcher sets
before log-in (an invite or panel link's consent page), else the browser's Accept-Language,
else ``settings.LANGUAGE_CODE``. Every other page (staff, reports, the admin, the API) is
English whatever the browser asks for: its strings are not translated, and Django's own
messages there must not switch language half-way down a page.
"""

from __future__ import annotations

from django.conf import settings
from django.utils import translation
from django.utils.cache import patch_vary_headers

# URL namespaces whose pages annotators see; their "staff_*" views are staff pages.
ANNOTATOR_NAMESPACES = frozenset({"annotations", "recruitment", "guidelines", "qualification"})
# Pages outside those namespaces that annotators see.
ANNOTATOR_URL_NAMES = frozenset({"login"})


def language_codes() -> list[str]:
    return [code for code, _ in settings.LANGUAGES]


def is_annotator_page(resolver_match) -> bool:
    if resolver_match is None:
        return False
    if resolver_match.url_name in ANNOTATOR_URL_NAMES and not resolver_match.namespace:
        return True
    return resolver_match.namespace in ANNOTATOR_NAMESPACES and not (
        resolver_match.url_name or ""
    ).startswith("staff_")


def annotator_language(request) -> str:
    """The language an annotator page is shown in (the order is in the module docstring)."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        # The log-in backend loads the annotator with the user: no query on the survey's path.
        annotator = getattr(user, "annotator", None)  # None: not an annotator
        if annotator is not None and annotator.language in language_codes():
            return annotator.language
    return translation.get_language_from_request(request)


class SurveyLanguageMiddleware:
    """Activates the annotator's language for annotator pages, English for the rest."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        translation.activate(settings.LANGUAGE_CODE)
        request.LANGUAGE_CODE = settings.LANGUAGE_CODE
        response = self.get_response(request)
        if getattr(request, "annotator_page", False):
            patch_vary_headers(response, ("Accept-Language", "Cookie"))
        response.headers.setdefault("Content-Language", translation.get_language())
        translation.deactivate()
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        request.annotator_page = is_annotator_page(request.resolver_match)
        if request.annotator_page:
            language = annotator_language(request)
            translation.activate(language)
            request.LANGUAGE_CODE = language
        return None
