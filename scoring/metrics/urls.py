"""URLs of a study's validated metrics; the paths are the ones the staff pages and the API have
always used (staff/… and api/…), mounted at the site root."""

from django.urls import path

from scoring.metrics import views

app_name = "metrics"
urlpatterns = [
    path("staff/studies/<slug:slug>/summary/", views.study_summary, name="study_summary"),
    path("staff/studies/<slug:slug>/statistics/", views.study_statistics, name="study_statistics"),
    path("staff/studies/<slug:slug>/batch-plan/", views.batch_plan, name="batch_plan"),
    path(
        "staff/studies/<slug:slug>/judge-fairness/",
        views.study_judge_fairness,
        name="study_judge_fairness",
    ),
    path(
        "staff/studies/<slug:slug>/rates/<str:source>/<str:measure>.<str:fmt>",
        views.rates_chart,
        name="rates_chart",
    ),
    path(
        "staff/studies/<slug:slug>/export/metrics.json",
        views.export_metrics,
        name="export_metrics",
    ),
    path("api/studies/<slug:slug>/metrics/", views.StudyMetrics.as_view(), name="study_metrics"),
]
