from django.urls import path

from . import views

app_name = "report"
urlpatterns = [
    path("studies/<slug:slug>/report/", views.study_report, name="study_report"),
    path(
        "studies/<slug:slug>/report/report.json", views.study_report_json, name="study_report_json"
    ),
    path("studies/<slug:slug>/report/report.pdf", views.study_report_pdf, name="study_report_pdf"),
    path(
        "studies/<slug:slug>/report/figures/<str:key>.<str:fmt>",
        views.study_report_figure,
        name="study_report_figure",
    ),
    path("studies/<slug:slug>/disparities/", views.study_disparities, name="study_disparities"),
    path("studies/<slug:slug>/safety/", views.study_safety, name="study_safety"),
]
