"""Files from users are hostile (issue 20 items 1 and 10): stored under a server-chosen name
from the decoded format, served as image/* with nosniff and a sandbox CSP, decoded in full
(every frame counted, a truncated stream refused), zip members streamed against a budget."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
from PIL import Image

from annotations import services
from annotations.imports import importers
from annotations.imports.manifest import ManifestInvalid
from annotations.imports.uploads import UploadInvalid, unpack_upload
from annotations.models import Item
from tests.support.django_fixtures import manifest_line, write_manifest

SCRIPT = b"\nalert(document.cookie);fetch('/admin/')\n"


def gif_bytes(size=(8, 8), frames=1) -> bytes:
    buffer = io.BytesIO()
    images = [Image.new("L", size, (i * 5) % 256).convert("P") for i in range(frames)]
    images[0].save(buffer, "GIF", save_all=frames > 1, append_images=images[1:])
    return buffer.getvalue()


def png_bytes(size=(64, 64)) -> bytes:
    buffer = io.BytesIO()
    Image.effect_noise(size, 60).convert("RGB").save(buffer, "PNG")
    return buffer.getvalue()


def polyglot(tmp_path: Path, name: str) -> Path:
    """A valid GIF followed by JavaScript, under a script's name."""
    path = tmp_path / "bundle" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gif_bytes() + SCRIPT)
    return path


def assert_served_as_image(response, content_type):
    assert response.status_code == 200
    assert response["Content-Type"] == content_type
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "default-src 'none'; sandbox"
    assert ".js" not in response.get("Content-Disposition", "")


# --- item 1: names chosen by the server, images served as images ----------------------------


def test_manifest_images_are_stored_under_the_decoded_format(study, staff_client, tmp_path):
    polyglot(tmp_path, "x.js")
    polyglot(tmp_path, "page.html")
    manifest = write_manifest(
        tmp_path / "bundle",
        [
            manifest_line("a", image="x.js"),
            manifest_line("b", image="page.html", value="US", source_image="x.js", mode="t2i"),
        ],
    )
    importers.items_import(study=study, manifest=manifest)
    for item in Item.objects.filter(study=study):
        for field in (item.image, item.source_image):
            if field:
                assert field.name.endswith(".gif"), field.name
                assert (
                    Path(field.name).stem == item.image_sha256 or len(Path(field.name).stem) >= 64
                )
        response = staff_client.get(f"/items/{item.pk}/image/")
        assert_served_as_image(response, "image/gif")


def test_zip_members_are_stored_under_the_decoded_format(study, tmp_path):
    archive = tmp_path / "up.zip"
    manifest = "\n".join(
        __import__("json").dumps(line) for line in [manifest_line("a", image="x.js")]
    )
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("manifest.jsonl", manifest + "\n")
        bundle.writestr("x.js", gif_bytes() + SCRIPT)
    path = unpack_upload(archive, tmp_path / "out")
    importers.items_import(study=study, manifest=path)
    assert Item.objects.get(study=study).image.name.endswith(".gif")


def test_a_replaced_image_is_stored_under_the_decoded_format(imported_study, staff_user, tmp_path):
    item = Item.objects.filter(study=imported_study).first()
    services.item_image_replace(item=item, image=polyglot(tmp_path, "evil.html"), user=staff_user)
    item.refresh_from_db()
    assert item.image.name.endswith(".gif")


def test_text_with_an_image_name_is_refused(study, tmp_path):
    path = tmp_path / "bundle" / "x.png"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"<script>alert(1)</script>")
    manifest = write_manifest(tmp_path / "bundle", [manifest_line("a", image="x.png")])
    with pytest.raises(ManifestInvalid, match="not an image we can read"):
        importers.items_import(study=study, manifest=manifest)


def test_a_stored_file_that_is_not_an_image_is_never_served(imported_study, staff_client):
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    item = Item.objects.filter(study=imported_study).first()
    name = default_storage.save("studies/legacy/x.html", ContentFile(b"<script>1</script>"))
    Item.objects.filter(pk=item.pk).update(image=name)
    assert staff_client.get(f"/items/{item.pk}/image/").status_code == 404


def test_face_set_sources_are_stored_and_served_as_their_format(staff_client, tmp_path, db):
    from generation.faces.services import face_templates_import
    from generation.models import FaceSet, FaceTemplate

    face_set = FaceSet.objects.create(name="faces", slug="faces")
    folder = tmp_path / "sources" / "chef"
    folder.mkdir(parents=True)
    (folder / "one.webp").write_bytes(png_bytes())  # a PNG under a WebP name
    face_templates_import(face_set=face_set, sources=tmp_path / "sources")
    template = FaceTemplate.objects.get(face_set=face_set)
    assert template.image.name.endswith(".png")
    response = staff_client.get(f"/staff/generation/faces/faces/images/source/{template.pk}/")
    assert_served_as_image(response, "image/png")


# --- item 10: every frame, the whole stream, zip members against a budget --------------------


def test_the_pixel_limit_counts_every_frame():
    from annotations.common.image_files import ImageRefused, image_decoded

    data = gif_bytes(size=(200, 200), frames=50)  # 2 Mpx in all, 40 kpx a frame
    image_decoded(data, max_pixels=2_000_000)
    with pytest.raises(ImageRefused, match="50 frames of 200x200"):
        image_decoded(data, max_pixels=1_000_000)


def test_an_animated_gif_over_the_budget_is_refused_on_import(study, tmp_path, settings):
    settings.ACRB_MAX_IMAGE_PIXELS = 1_000_000
    path = tmp_path / "bundle" / "anim.gif"
    path.parent.mkdir(parents=True)
    path.write_bytes(gif_bytes(size=(200, 200), frames=50))
    manifest = write_manifest(tmp_path / "bundle", [manifest_line("a", image="anim.gif")])
    with pytest.raises(ManifestInvalid, match="pixels, over the limit"):
        importers.items_import(study=study, manifest=manifest)


def truncated_png(size=(256, 256)) -> bytes:
    """A PNG whose pixel stream stops half-way, in well-formed chunks with valid checksums:
    ``verify()`` passes it, only decoding finds the missing rows."""
    data = png_bytes(size)
    chunks, offset = [], 8
    while offset < len(data):
        length = struct.unpack(">I", data[offset : offset + 4])[0]
        kind = data[offset + 4 : offset + 8]
        chunks.append((kind, data[offset + 8 : offset + 8 + length]))
        offset += 12 + length
    pixels = b"".join(body for kind, body in chunks if kind == b"IDAT")
    out = [data[:8]]
    for kind, body in chunks:
        if kind == b"IDAT":
            if pixels is None:
                continue
            body, pixels = pixels[: len(pixels) // 2], None
        out.append(struct.pack(">I", len(body)) + kind + body)
        out.append(struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    return b"".join(out)


def test_a_truncated_png_is_refused(study, tmp_path):
    path = tmp_path / "bundle" / "cut.png"
    path.parent.mkdir(parents=True)
    path.write_bytes(truncated_png())
    manifest = write_manifest(tmp_path / "bundle", [manifest_line("a", image="cut.png")])
    with pytest.raises(ManifestInvalid, match="cut.png is not an image we can read"):
        importers.items_import(study=study, manifest=manifest)


def test_zip_members_are_streamed_against_the_budget(tmp_path):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("manifest.jsonl", "{}\n")
        bundle.writestr("zeros.png", b"\0" * (8 * 1024**2))
    with pytest.raises(UploadInvalid, match="zeros.png"):
        unpack_upload(archive, tmp_path / "out", max_member_bytes=2 * 1024**2)
    written = tmp_path / "out" / "zeros.png"
    assert not written.exists() or written.stat().st_size <= 3 * 1024**2
    with pytest.raises(UploadInvalid, match="upload budget"):
        unpack_upload(archive, tmp_path / "out2", max_total_bytes=4 * 1024**2)
