from django.urls import path

from annotations.qualification import views

app_name = "qualification"
urlpatterns = [
    path("batches/<int:batch_id>/qualification/", views.qualification_page, name="page"),
    path(
        "batches/<int:batch_id>/qualification/start/",
        views.qualification_start,
        name="start",
    ),
    path(
        "staff/batches/<int:batch_id>/qualification/<int:annotator_id>/grant/",
        views.qualification_grant,
        name="staff_grant",
    ),
    path(
        "staff/batches/<int:batch_id>/qualification/<int:annotator_id>/override/",
        views.qualification_override,
        name="staff_override",
    ),
]
