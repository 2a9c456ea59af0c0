from django.urls import path

from annotations.staff import people_views, study_views, views

app_name = "staff"
urlpatterns = [
    path("", views.study_list, name="study_list"),
    path("studies/new/", study_views.study_new, name="study_new"),
    path("studies/new/create/", study_views.study_new_create, name="study_new_create"),
    path("people/", people_views.people_list, name="people"),
    path("people/create/", people_views.people_create, name="people_create"),
    path("people/invites/", people_views.people_invites_create, name="people_invites_create"),
    path(
        "people/<int:pk>/reset/", people_views.annotator_access_reset, name="annotator_access_reset"
    ),
    path("people/<int:pk>/pause/", people_views.annotator_pause, name="annotator_pause"),
    path("people/<int:pk>/resume/", people_views.annotator_resume, name="annotator_resume"),
    path("studies/<slug:slug>/", views.study_detail, name="study_detail"),
    path(
        "studies/<slug:slug>/audit-context/",
        views.study_audit_context,
        name="study_audit_context",
    ),
    path("studies/<slug:slug>/batches/new/", views.batch_create, name="batch_create"),
    path(
        "studies/<slug:slug>/harmful-controls/",
        views.study_harmful_controls,
        name="study_harmful_controls",
    ),
    path("studies/<slug:slug>/import/", views.items_upload, name="items_upload"),
    path("studies/<slug:slug>/import-labels/", views.annotations_upload, name="annotations_upload"),
    path(
        "studies/<slug:slug>/export/annotations.<str:fmt>",
        views.export_annotations,
        name="export_annotations",
    ),
    path("studies/<slug:slug>/flags/", views.flag_queue, name="flag_queue"),
    path("items/<int:pk>/flags/dismiss/", views.item_flags_dismiss, name="item_flags_dismiss"),
    path("items/<int:pk>/exclude/", views.item_exclude, name="item_exclude"),
    path("items/<int:pk>/include/", views.item_include, name="item_include"),
    path("items/<int:pk>/replace-image/", views.item_image_replace, name="item_image_replace"),
    path("batches/<int:pk>/", views.batch_detail, name="batch_detail"),
    path(
        "batches/<int:pk>/add-annotators/", views.batch_add_annotators, name="batch_add_annotators"
    ),
    path("batches/<int:pk>/reassign/", views.batch_reassign, name="batch_reassign"),
    path("jobs/<int:pk>/", views.job_detail, name="job_detail"),
]
