from django.urls import path

from . import publish_views, views

app_name = "reflect"
urlpatterns = [
    path("", views.face_set_list, name="face_set_list"),
    path("sets/<slug:slug>/", views.face_set_detail, name="face_set_detail"),
    path("sets/<slug:slug>/publish/", publish_views.face_set_publish, name="face_set_publish"),
    path("sets/<slug:slug>/runs/start/", views.run_start, name="run_start"),
    path("sets/<slug:slug>/runs/<int:run_id>/answers.jsonl", views.run_answers, name="run_answers"),
    path("sets/<slug:slug>/report/refresh/", views.report_refresh, name="report_refresh"),
    path("sets/<slug:slug>/report.json", views.report_json, name="report_json"),
    path("sets/<slug:slug>/audit-report.<str:fmt>", views.report_document, name="report_document"),
    path("sets/<slug:slug>/tables/<str:table>.csv", views.report_csv, name="report_csv"),
    path(
        "sets/<slug:slug>/figures/<str:name>.<str:fmt>", views.report_figure, name="report_figure"
    ),
    path("images/<int:pk>/", views.face_image, name="face_image"),
]
