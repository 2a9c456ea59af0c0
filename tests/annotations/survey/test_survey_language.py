"""The survey and consent pages in the annotator's language (docs/annotation.md#the-surveys-language).

Every second language must be complete: no empty or fuzzy entry in its .po, a committed .mo
that says the same, and annotator pages that, rendered in it, show no English string of the
catalogue and no text node left as it is in English (which catches a string nobody wrapped).
The language is stored with each answer and exported; staff pages stay English.
"""

from __future__ import annotations

import ast
import gettext
import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from annotations import selectors, services
from annotations.common.row_fields import ANNOTATION_ROW
from annotations.models import Annotation, AnnotationHistory, Assignment
from annotations.recruitment import invites, panels
from annotations.recruitment.consent import consent_publish
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db

LOCALE = Path(settings.LOCALE_PATHS[0])
SECOND_LANGUAGES = [code for code, _ in settings.LANGUAGES if code != settings.LANGUAGE_CODE]


# --- the catalogue -------------------------------------------------------------------------


def po_entries(path: Path) -> list[dict]:
    """The entries of a .po file: msgctxt, msgid, msgid_plural, msgstr (a list), flags."""
    entries, entry, key = [], None, None
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        if not line.strip():
            if entry and "msgid" in entry:
                entries.append(entry)
            entry, key = None, None
            continue
        entry = entry if entry is not None else {"flags": "", "msgstr": []}
        if line.startswith("#,"):
            entry["flags"] += line
            continue
        if line.startswith("#"):
            continue
        match = re.match(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?) (".*")$', line)
        if match:
            key, text = match.group(1), ast.literal_eval(match.group(2))
            if key.startswith("msgstr"):
                entry["msgstr"].append(text)
            else:
                entry[key] = text
        elif line.startswith('"'):
            text = ast.literal_eval(line)
            if key.startswith("msgstr"):
                entry["msgstr"][-1] += text
            else:
                entry[key] += text
    return [e for e in entries if e["msgid"]]  # the header has an empty msgid


def catalogue(language: str) -> list[dict]:
    return po_entries(LOCALE / language / "LC_MESSAGES" / "django.po")


def test_there_is_a_second_language():
    assert SECOND_LANGUAGES, "settings.LANGUAGES should offer a language besides English"


@pytest.mark.parametrize("language", SECOND_LANGUAGES)
def test_every_message_is_translated_and_the_committed_mo_matches(language):
    entries = catalogue(language)
    assert len(entries) > 80  # the survey, guidelines, consent, log-in and refusals
    empty = [e["msgid"] for e in entries if not all(e["msgstr"]) or not e["msgstr"]]
    fuzzy = [e["msgid"] for e in entries if "fuzzy" in e["flags"]]
    assert empty == [] and fuzzy == []
    compiled = LOCALE / language / "LC_MESSAGES" / "django.mo"
    with compiled.open("rb") as handle:
        mo = gettext.GNUTranslations(handle)
    for e in entries:
        key = f"{e['msgctxt']}\x04{e['msgid']}" if "msgctxt" in e else e["msgid"]
        if "msgid_plural" in e:
            got = [mo.ngettext(e["msgid"], e["msgid_plural"], n) for n in (1, 2)]
            assert got == e["msgstr"][:2], e["msgid"]
        else:
            assert mo._catalog.get(key) == e["msgstr"][0], f"stale .mo for {e['msgid']!r}"


@pytest.mark.parametrize("language", SECOND_LANGUAGES)
def test_placeholders_survive_translation(language):
    for e in catalogue(language):
        wanted = sorted(re.findall(r"%\(\w+\)s", e["msgid"]))
        for text in e["msgstr"]:
            assert sorted(set(re.findall(r"%\(\w+\)s", text))) == sorted(set(wanted)), e["msgid"]
            assert re.findall(r"</?\w+", text) == re.findall(r"</?\w+", e["msgid"]), e["msgid"]


# --- pages rendered in the second language -------------------------------------------------


class _TextNodes(HTMLParser):
    """Visible text nodes and the attributes a person reads (alt, title, labels)."""

    ATTRIBUTES = ("alt", "title", "aria-label", "data-label", "placeholder")

    def __init__(self):
        super().__init__()
        self.nodes, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        self.nodes += [value for name, value in attrs if name in self.ATTRIBUTES and value]

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip and data.strip():
            self.nodes.append(" ".join(data.split()))


def text_nodes(content: bytes) -> set[str]:
    parser = _TextNodes()
    parser.feed(content.decode("utf-8"))
    return set(parser.nodes)


# Text that is the same in every language: symbols, numbers, key names, the brand, the
# language names of the switcher, and data the study wrote (names, prompts, consent text).
NEUTRAL = re.compile(r"^[\d\s/·←→–\-—().:,×]*$|^[A-Z]$|^\(version \d+\)$")
ALWAYS_SAME = {"ACRB audit", "English", "Français", "Enter"}


def untranslated(english: bytes, translated: bytes, data: set[str]) -> set[str]:
    """Text nodes shown identically in English and in the translation, data and symbols aside."""
    same = text_nodes(english) & text_nodes(translated)
    return {
        text
        for text in same
        if not NEUTRAL.match(text)
        and text not in ALWAYS_SAME
        and not any(value and value in text for value in data)
    }


def english_leftovers(content: bytes, language: str) -> list[str]:
    """Catalogue msgids (whose translation differs) that appear as they are on the page."""
    page = " ".join(html.unescape(content.decode("utf-8")).split())
    found = []
    for e in catalogue(language):
        if e["msgstr"][0] == e["msgid"] or len(e["msgid"]) < 4:
            continue
        # the fixed text around placeholders, each piece long enough to mean something
        for piece in re.split(r"%\(\w+\)s", " ".join(e["msgid"].split())):
            if len(piece.strip()) >= 12 and piece.strip() in page:
                found.append(e["msgid"])
    return found


def _in(client: Client, language: str) -> Client:
    if language == settings.LANGUAGE_CODE:
        client.cookies.pop(settings.LANGUAGE_COOKIE_NAME, None)
    else:
        client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    return client


def _pages(batch, annotator):
    """(name, function(client) -> response) for every annotator page of a running study."""
    assignment = Assignment.objects.filter(batch=batch, annotator=annotator).order_by("position")[0]
    return [
        ("home", lambda c: c.get(reverse("annotations:home"))),
        ("guidelines", lambda c: c.get(reverse("annotations:guidelines"))),
        ("survey", lambda c: c.get(reverse("annotations:assignment", args=[assignment.pk]))),
        (
            "survey without an answer",
            lambda c: c.post(reverse("annotations:answer", args=[assignment.pk]), {}),
        ),
    ]


@pytest.fixture
def data_values(imported_study, batch):
    items = imported_study.items.all()
    values = {imported_study.name, batch.name, "recruits", "ann0", "ann1", "panel"}
    values |= {item.prompt for item in items} | {item.cue for item in items}
    values |= {item.item_id for item in items}
    values |= {str(item.attribute_value.cue_description) for item in items}
    return {value for value in values if value}


def _check_page(name, english, translated, language, data):
    assert english.status_code == translated.status_code, name
    assert english_leftovers(translated.content, language) == [], name
    assert untranslated(english.content, translated.content, data) == set(), name
    assert translated["Content-Language"] == language, name
    assert f'<html lang="{language}">'.encode() in translated.content, name


@pytest.mark.parametrize("language", SECOND_LANGUAGES)
def test_survey_pages_render_fully_in_the_second_language(language, batch, annotators, data_values):
    english, translated = client_for(annotators[0]), _in(client_for(annotators[0]), language)
    for name, get in _pages(batch, annotators[0]):
        _check_page(name, get(english), get(translated), language, data_values)
    # an answered item (the revision line) and the batch's end page
    for assignment in Assignment.objects.filter(batch=batch, annotator=annotators[0]):
        services.annotation_submit(assignment=assignment, hard_refusal=True, cue_label=None)
    assignment = Assignment.objects.filter(batch=batch, annotator=annotators[0]).first()
    survey = reverse("annotations:assignment", args=[assignment.pk])
    _check_page("answered", english.get(survey), translated.get(survey), language, data_values)
    end = reverse("annotations:batch_next", args=[batch.pk])
    _check_page("batch done", english.get(end), translated.get(end), language, data_values)


@pytest.mark.parametrize("language", SECOND_LANGUAGES)
def test_consent_login_and_refusal_pages_render_fully_in_the_second_language(
    language, batch, annotators, open_batch_for, data_values
):
    consent = consent_publish(study=batch.study, consent_text="You will label images.")
    data = data_values | {consent.consent_text}
    consent_url = reverse("recruitment:consent", args=[batch.pk])
    pages = [
        ("login", Client, reverse("login")),
        ("consent", lambda: client_for(annotators[0]), consent_url),
        ("bad invite", Client, reverse("recruitment:invite", args=["nope"])),
    ]
    for name, make, url in pages:
        english, translated = make().get(url), _in(make(), language).get(url)
        _check_page(name, english, translated, language, data)
    # not ticking the box: the consent page's error line
    agree = {"consent_id": consent.pk}
    english = client_for(annotators[0]).post(consent_url, agree)
    translated = _in(client_for(annotators[0]), language).post(consent_url, agree)
    _check_page("consent error", english, translated, language, data)
    # an invite link's consent page (before log-in) and a panel's completion code
    recruit_batch = open_batch_for(batch.study)
    [(_, token)] = invites.invite_links_create(batch=recruit_batch, group="Nigerian")
    invite_url = reverse("recruitment:invite", args=[token])
    _check_page(
        "invite consent",
        Client().get(invite_url),
        _in(Client(), language).get(invite_url),
        language,
        data | {recruit_batch.name},
    )


@pytest.mark.parametrize("language", SECOND_LANGUAGES)
def test_panel_refusals_and_completion_code_in_the_second_language(
    language, imported_study, open_batch_for, data_values
):
    consent_publish(study=imported_study, consent_text="You will label images.")
    link = panels.panel_link_create(
        batch=open_batch_for(imported_study), name="wave", completion_code="XK7-42"
    )
    url = reverse("recruitment:panel_entry", args=[link.slug])
    missing = (Client().get(url), _in(Client(), language).get(url))
    _check_page("panel refusal", *missing, language, data_values | {"PROLIFIC_PID"})
    bad = {"PROLIFIC_PID": "a b"}
    _check_page(
        "panel bad id",
        Client().get(url, bad),
        _in(Client(), language).get(url, bad),
        language,
        data_values | {"PROLIFIC_PID", "'_', '.', ':'"},
    )


@pytest.fixture
def open_batch_for():
    from annotations.models import Batch
    from annotations.recruitment import enrolment

    def make(study):
        return enrolment.recruitment_batch_create(
            study=study,
            name="recruits",
            policy=Batch.Policy.EXPERTISE,
            overlap_k=1,
            items_per_annotator=3,
            seed=5,
        )

    return make


def test_a_finished_panel_participant_sees_the_completion_code_in_their_language(
    imported_study, open_batch_for
):
    consent = consent_publish(study=imported_study, consent_text="You will label images.")
    batch = open_batch_for(imported_study)
    link = panels.panel_link_create(batch=batch, name="wave", completion_code="XK7-42")
    client = _in(Client(), "fr")
    entry = reverse("recruitment:panel_entry", args=[link.slug])
    client.post(entry, {"agree": "yes", "consent_id": consent.pk, "PROLIFIC_PID": "p1"})
    for assignment in Assignment.objects.filter(batch=batch):
        client.post(reverse("annotations:answer", args=[assignment.pk]), {"answer": "refusal"})
    assert Annotation.objects.filter(language="fr").count() == 3
    page = client.get(reverse("recruitment:panel_complete", args=[batch.pk]))
    text = page.content.decode()
    assert page.status_code == 200 and "XK7-42" in text
    assert "Votre code de fin" in text and "Your completion code" not in text


# --- the language chosen, stored and exported ----------------------------------------------


def test_the_switcher_saves_the_annotators_choice_and_returns_to_the_page(batch, annotators):
    c = client_for(annotators[0])
    page = reverse("annotations:guidelines")
    response = c.post(reverse("annotations:language"), {"language": "fr", "next": page})
    assert response.status_code == 302 and response["Location"] == page
    annotators[0].refresh_from_db()
    assert annotators[0].language == "fr"
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "fr"
    # the preference follows the annotator to a browser without the cookie
    fresh = client_for(annotators[0])
    assert "Guide d'annotation" in fresh.get(page).content.decode()
    # and beats the browser's own language
    asked = fresh.get(page, HTTP_ACCEPT_LANGUAGE="en")
    assert asked["Content-Language"] == "fr"


def test_the_switcher_refuses_unknown_languages_and_foreign_redirects(annotators):
    c = client_for(annotators[0])
    url = reverse("annotations:language")
    assert c.post(url, {"language": "xx", "next": "/guidelines/"})["Location"] == "/guidelines/"
    annotators[0].refresh_from_db()
    assert annotators[0].language == ""
    away = c.post(url, {"language": "fr", "next": "https://evil.example/"})
    assert away["Location"] == reverse("annotations:home")
    assert c.get(url).status_code == 405


def test_the_switcher_works_before_log_in_with_a_cookie():
    response = Client().post(
        reverse("annotations:language"), {"language": "fr", "next": reverse("login")}
    )
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "fr"


def test_the_switcher_is_on_annotator_pages_only(batch, annotators, staff_client):
    assert (
        b"language-switcher" in client_for(annotators[0]).get(reverse("annotations:home")).content
    )
    staff_page = staff_client.get(reverse("staff:study_list"))
    assert staff_page.status_code == 200 and b"language-switcher" not in staff_page.content


def test_the_language_is_stored_with_each_answer_and_exported(batch, annotators):
    first, second = Assignment.objects.filter(batch=batch, annotator=annotators[0])[:2]
    french, english = _in(client_for(annotators[0]), "fr"), client_for(annotators[0])
    url = reverse("annotations:answer", args=[first.pk])
    assert french.post(url, {"answer": "erased"}).status_code == 302
    english.post(reverse("annotations:answer", args=[second.pk]), {"answer": "retained"})
    english.post(url, {"answer": "retained"})  # an edit in English: a new revision
    answer = Annotation.objects.get(assignment=first)
    assert (answer.language, answer.revision) == ("en", 2)
    history = AnnotationHistory.objects.filter(annotation=answer).order_by("revision")
    assert [row.language for row in history] == ["fr", "en"]
    assert Annotation.objects.get(assignment=second).language == "en"
    rows = selectors.annotation_rows(study=batch.study)
    assert sorted(row["language"] for row in rows) == ["en", "en"]
    assert ANNOTATION_ROW.types["language"] == ("string", False)


def test_an_answer_given_in_french_is_exported_as_fr(batch, annotators, staff_client):
    assignment = Assignment.objects.filter(batch=batch, annotator=annotators[1]).first()
    c = _in(client_for(annotators[1]), "fr")
    c.post(reverse("annotations:answer", args=[assignment.pk]), {"answer": "refusal"})
    [row] = selectors.annotation_rows(study=batch.study)
    assert row["language"] == "fr"
    api = staff_client.get(reverse("api:study_annotations", args=[batch.study.slug]))
    assert [row["language"] for row in api.json()] == ["fr"]


# --- staff pages stay English --------------------------------------------------------------


def test_staff_pages_stay_english_whatever_the_browser_asks(staff_client, imported_study):
    staff_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "fr"
    for url in (
        reverse("staff:study_list"),
        reverse("staff:study_detail", args=[imported_study.slug]),
        reverse("recruitment:staff_page", args=[imported_study.slug]),
    ):
        page = staff_client.get(url, HTTP_ACCEPT_LANGUAGE="fr")
        text = page.content.decode()
        assert page.status_code == 200 and page["Content-Language"] == "en", url
        assert "Log out" in text and "Se déconnecter" not in text, url
        assert '<html lang="en">' in text, url
