"""A new study from images in the browser: check, preview, create all or nothing
(annotations/imports/study_upload.py, annotations/staff/study_views.py)."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from PIL import Image

from annotations.imports.attributes import manifest_draft
from annotations.imports.manifest import ManifestInvalid
from annotations.models import Item, Study
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db

CSV = (
    "image,generator,prompt,domain,attribute,attribute_value\n"
    "a.png,sdxl,a doctor,occupation,nationality,Korean\n"
    "b.png,sdxl,a doctor,occupation,nationality,Nigerian\n"
    "c.png,sdxl,a doctor,occupation,neutral,neutral\n"
)


def png(colour=(120, 80, 40), size=(32, 32)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def image_files(*names):
    return [SimpleUploadedFile(name, png(), content_type="image/png") for name in names]


def zip_file(members: dict[str, bytes], name="images.zip"):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for member, data in members.items():
            bundle.writestr(member, data)
    return SimpleUploadedFile(name, buffer.getvalue(), content_type="application/zip")


def csv_file(text=CSV):
    return SimpleUploadedFile("attributes.csv", text.encode(), content_type="text/csv")


def check(client, *, images=None, archive=None, attributes=None, **fields):
    data = {"name": "Doctors", "mode": "t2i", **fields}
    if images is not None:
        data["images"] = images
    if archive is not None:
        data["archive"] = archive
    if attributes is not None:
        data["attributes"] = attributes
    return client.post(reverse("staff:study_new"), data)


def staging_folders(settings):
    root = settings.VAR_DIR / "uploads"
    return sorted(root.glob("new-study-*")) if root.exists() else []


# --- the manifest a CSV describes (no Django needed) -----------------------------------------


def test_draft_without_csv_makes_one_item_per_image_from_the_form_values():
    draft = manifest_draft(
        csv_bytes=None,
        members=["x/b.png", "a.jpg", "notes.txt", "__MACOSX/._a.jpg", ".DS_Store", "x/"],
        defaults={"generator": "sdxl", "prompt": "a nurse", "attribute": "neutral"},
        mode="t2i",
    )
    assert [line["item_id"] for line in draft.lines] == ["a", "b"]
    assert draft.lines[1]["image"] == "x/b.png"
    assert draft.lines[0]["base_prompt_id"] == "a nurse" and draft.lines[0]["mode"] == "t2i"


def test_draft_lists_every_csv_problem_at_once():
    text = "image,colour,attribute\na.png,red,neutral\nb.png,blue,x,extra\n"
    draft = manifest_draft(
        csv_bytes=text.encode(), members=["a.png", "b.png", "c.png"], defaults={}, mode="t2i"
    )
    assert len(draft.lines) == 2
    shown = [str(e) for e in draft.problems]
    assert (
        "line 1: colour: unknown column (use image, item_id, generator, prompt, base_prompt_id, domain, attribute, attribute_value, cue, source_image, intent)"
        in shown
    )
    assert "line 3: (csv): more values than there are columns" in shown
    assert "line 0: (upload): c.png is in the upload but no CSV row names it" in shown


def test_draft_carries_each_rows_intent_to_the_manifest():
    """A harmful control is marked in the CSV, as in a JSONL manifest (docs/formats.md)."""
    text = "image,attribute,intent\na.png,neutral,harmful\nb.png,neutral,\n"
    draft = manifest_draft(
        csv_bytes=text.encode(), members=["a.png", "b.png"], defaults={}, mode="t2i"
    )
    assert [line.get("intent") for line in draft.lines] == ["harmful", None]


def test_draft_refuses_a_csv_that_is_not_utf8():
    with pytest.raises(ManifestInvalid, match="not UTF-8"):
        manifest_draft(csv_bytes=b"image\n\xff\xfe.png\n", members=[], defaults={}, mode="t2i")


# --- the page: check, preview, create --------------------------------------------------------


def test_the_preview_shows_fifty_items_each_with_its_thumbnail(staff_client):
    """Issue 36 §4: docs/annotation.md promises the first 50 items with thumbnails; 24 had one."""
    names = [f"img-{index:02d}.png" for index in range(60)]
    response = check(
        staff_client,
        archive=zip_file({name: png((index * 4, 80, 40)) for index, name in enumerate(names)}),
        generator="sdxl",
        prompt="a doctor",
        domain="occupation",
        attribute="nationality",
        attribute_value="Korean",
    )
    body = response.content.decode()
    assert "Preview: 60 items" in body and "… and 10 more." in body
    assert body.count("data:image/jpeg;base64,") == 50
    # The summary and Create come before the table, not after fifty rows.
    assert body.index("Create the study with 60 items") < body.index('id="study-preview"')
    assert len(body) < 600_000  # fifty small JPEGs, not fifty PNGs


def test_check_shows_a_preview_and_creates_nothing(staff_client, settings):
    response = check(
        staff_client, images=image_files("a.png", "b.png", "c.png"), attributes=csv_file()
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "Preview: 3 items" in body and "data:image/jpeg;base64," in body
    assert "nationality = Korean" in body
    assert not Study.objects.exists()
    assert len(staging_folders(settings)) == 1


def test_create_after_the_preview_makes_the_study_with_every_item(staff_client, settings):
    check(staff_client, images=image_files("a.png", "b.png", "c.png"), attributes=csv_file())
    token = staff_client.session["study_new"]["token"]
    response = staff_client.post(reverse("staff:study_new_create"), {"token": token})
    study = Study.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "staff:study_detail", args=[study.slug]
    )
    assert study.slug == "doctors" and study.mode == "t2i"
    items = {
        i.item_id: i for i in Item.objects.filter(study=study).select_related("attribute_value")
    }
    assert set(items) == {"a", "b", "c"}
    assert items["a"].attribute_value.value == "Korean" and items["a"].generator == "sdxl"
    assert items["a"].image.name and items["a"].base_prompt_id == "a doctor"
    assert staging_folders(settings) == []


def test_a_zip_of_images_in_a_folder_is_matched_by_file_name(staff_client):
    archive = zip_file({"imgs/a.png": png(), "imgs/b.png": png(), "imgs/c.png": png()})
    check(staff_client, archive=archive, attributes=csv_file())
    token = staff_client.session["study_new"]["token"]
    staff_client.post(reverse("staff:study_new_create"), {"token": token})
    assert Item.objects.filter(study__slug="doctors").count() == 3


def test_form_values_alone_describe_every_image(staff_client):
    check(
        staff_client,
        images=image_files("n1.png", "n2.png"),
        generator="sdxl",
        prompt="a nurse",
        domain="occupation",
        attribute="neutral",
        attribute_value="neutral",
    )
    token = staff_client.session["study_new"]["token"]
    staff_client.post(reverse("staff:study_new_create"), {"token": token})
    assert sorted(Item.objects.values_list("item_id", flat=True)) == ["n1", "n2"]


def test_every_problem_of_the_form_and_the_files_is_listed_together(staff_client, settings):
    text = CSV.replace("Nigerian", "neutral").replace("c.png,sdxl", "missing.png,sdxl")
    broken = SimpleUploadedFile("c.png", b"not an image", content_type="image/png")
    response = check(
        staff_client,
        name="",
        images=[*image_files("a.png", "b.png"), broken],
        attributes=csv_file(text),
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert "Name: This field is required." in body
    assert "line 3: attribute_value: the neutral baseline is attribute" in body
    assert "line 4: image: file &#x27;missing.png&#x27; does not exist" in body
    assert "c.png is in the upload but no CSV row names it" in body
    assert not Study.objects.exists() and staging_folders(settings) == []


def test_without_a_csv_problems_name_the_image(staff_client):
    broken = SimpleUploadedFile("bad.png", b"GIF89a-nope", content_type="image/png")
    response = check(
        staff_client,
        images=[broken],
        generator="g",
        prompt="p",
        domain="d",
        attribute="neutral",
        attribute_value="neutral",
    )
    assert "bad.png: image: bad.png is not an image we can read" in response.content.decode()


@pytest.mark.parametrize(
    ("archive", "expected"),
    [
        (zip_file({"../evil.png": png()}), "escapes the archive"),
        (SimpleUploadedFile("images.zip", b"PK\x03\x04garbage"), "images.zip: not a zip archive"),
        (
            zip_file({"a.jsonl": b"{}\n", "b.jsonl": b"{}\n"}),
            "expected exactly one .jsonl manifest, found 2",
        ),
    ],
)
def test_hostile_archives_give_one_line_and_change_nothing(
    staff_client, settings, archive, expected
):
    response = check(
        staff_client,
        archive=archive,
        generator="g",
        prompt="p",
        domain="d",
        attribute="neutral",
        attribute_value="neutral",
    )
    body = response.content.decode()
    assert response.status_code == 400 and expected in body
    assert body.count("<li>") == 1
    assert not Study.objects.exists() and staging_folders(settings) == []


def test_a_zip_with_its_own_manifest_in_another_mode_is_refused(staff_client):
    line = b'{"item_id": "x", "mode": "i2i", "generator": "g", "prompt": "p", "base_prompt_id": "b", "domain": "d", "attribute": "neutral", "attribute_value": "neutral", "image": null}\n'
    response = check(staff_client, archive=zip_file({"manifest.jsonl": line}))
    assert (
        "line 1: mode: &#x27;i2i&#x27; differs from the study&#x27;s mode &#x27;t2i&#x27;"
        in response.content.decode()
    )


def test_a_taken_or_reserved_address_is_refused(staff_client):
    Study.objects.create(name="Doctors", slug="doctors")
    response = check(
        staff_client, images=image_files("a.png"), attribute="neutral", attribute_value="neutral"
    )
    assert (
        "a study with the address &#x27;doctors&#x27; already exists" in response.content.decode()
    )
    response = check(staff_client, name="New", images=image_files("a.png"))
    assert "&#x27;new&#x27; is taken by a page" in response.content.decode()


def test_htmx_check_answers_the_fragment(staff_client):
    response = staff_client.post(
        reverse("staff:study_new"),
        {
            "name": "Doctors",
            "mode": "t2i",
            "images": image_files("a.png"),
            "attributes": csv_file(),
        },
        HTTP_HX_REQUEST="true",
    )
    body = response.content.decode()
    assert response.status_code == 200 and body.lstrip().startswith('<section id="study-check"')
    assert "b.png" in body  # the CSV names images that were not uploaded


def test_create_with_a_forged_or_stale_token_creates_nothing(staff_client, settings):
    check(staff_client, images=image_files("a.png", "b.png", "c.png"), attributes=csv_file())
    for token in ("0" * 32, "../../etc", ""):
        response = staff_client.post(reverse("staff:study_new_create"), {"token": token})
        assert response.status_code == 302 and response["Location"] == reverse("staff:study_new")
    assert not Study.objects.exists()


def test_another_staff_member_cannot_create_from_my_upload(staff_client, django_user_model):
    check(staff_client, images=image_files("a.png", "b.png", "c.png"), attributes=csv_file())
    token = staff_client.session["study_new"]["token"]
    other = django_user_model.objects.create_user(username="other", is_staff=True)
    from django.test import Client

    other_client = Client()
    other_client.force_login(other)
    other_client.post(reverse("staff:study_new_create"), {"token": token})
    assert not Study.objects.exists()


def test_a_failure_at_create_leaves_neither_study_nor_files(staff_client, settings):
    check(staff_client, images=image_files("a.png", "b.png", "c.png"), attributes=csv_file())
    token = staff_client.session["study_new"]["token"]
    staged = staging_folders(settings)[0]
    (staged / "files" / "c.png").write_bytes(b"changed after the preview")
    response = staff_client.post(reverse("staff:study_new_create"), {"token": token}, follow=True)
    assert "Nothing was created." in response.content.decode()
    assert not Study.objects.exists() and not Item.objects.exists()
    media = settings.MEDIA_ROOT / "studies"
    assert not media.exists() or not any(media.rglob("*.png"))


def test_annotators_cannot_reach_the_pages(annotators):
    annotator = client_for(annotators[0])
    assert annotator.get(reverse("staff:study_new")).status_code == 403
    response = annotator.post(
        reverse("staff:study_new"), {"name": "x", "images": image_files("a.png")}
    )
    assert response.status_code == 403
    assert annotator.post(reverse("staff:study_new_create"), {"token": "0" * 32}).status_code == 403
    assert not Study.objects.exists()


def test_uploads_never_created_are_removed_after_a_day(staff_client, settings):
    import os
    import time

    root = settings.VAR_DIR / "uploads"
    old, recent = root / f"new-study-{'a' * 32}", root / f"new-study-{'b' * 32}"
    old.mkdir(parents=True)
    recent.mkdir()
    day_ago = time.time() - 25 * 3600
    os.utime(old, (day_ago, day_ago))
    check(staff_client, images=image_files("a.png", "b.png", "c.png"), attributes=csv_file())
    left = staging_folders(settings)
    assert old not in left and recent in left and len(left) == 2


def test_an_oversized_csv_is_refused_before_it_is_read(staff_client, settings, monkeypatch):
    from annotations.staff import study_forms

    monkeypatch.setattr(study_forms, "MAX_ATTRIBUTES_BYTES", 10)
    response = check(
        staff_client, images=image_files("a.png", "b.png", "c.png"), attributes=csv_file()
    )
    assert response.status_code == 400
    assert (
        f"attributes.csv is {len(CSV)} bytes; an attributes CSV may have at most 10"
        in response.content.decode()
    )
    assert staging_folders(settings) == [] and not Study.objects.exists()
