from django.urls import path

from . import staff_views, views

app_name = "recruitment"
urlpatterns = [
    path("join/<str:token>/", views.invite_open, name="invite"),
    path("p/<slug:slug>/", views.panel_entry, name="panel_entry"),
    path("batches/<int:batch_id>/consent/", views.consent_page, name="consent"),
    path("batches/<int:batch_id>/complete/", views.panel_complete, name="panel_complete"),
    path(
        "staff/studies/<slug:slug>/recruitment/", staff_views.staff_recruitment, name="staff_page"
    ),
    path(
        "staff/studies/<slug:slug>/recruitment/consent/",
        staff_views.staff_consent_publish,
        name="staff_consent_publish",
    ),
    path(
        "staff/studies/<slug:slug>/recruitment/batches/",
        staff_views.staff_batch_create,
        name="staff_batch_create",
    ),
    path(
        "staff/studies/<slug:slug>/recruitment/invites/",
        staff_views.staff_invites_create,
        name="staff_invites_create",
    ),
    path(
        "staff/studies/<slug:slug>/recruitment/panel-links/",
        staff_views.staff_panel_link_create,
        name="staff_panel_link_create",
    ),
    path(
        "staff/invites/<int:pk>/revoke/",
        staff_views.staff_invite_revoke,
        name="staff_invite_revoke",
    ),
    path(
        "staff/panel-links/<int:pk>/close/",
        staff_views.staff_panel_link_close,
        name="staff_panel_link_close",
    ),
    path(
        "staff/panel-participants/<int:pk>/release/",
        staff_views.staff_participant_release,
        name="staff_participant_release",
    ),
]
