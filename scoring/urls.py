from django.urls import path

from . import views

app_name = "scoring"
urlpatterns = [
    path("studies/<slug:slug>/", views.study_judges, name="study_judges"),
    path("studies/<slug:slug>/score/", views.judge_score, name="judge_score"),
    path("studies/<slug:slug>/calibrate/", views.threshold_calibrate, name="threshold_calibrate"),
    path("studies/<slug:slug>/review/", views.review_items, name="review_items"),
    path("studies/<slug:slug>/roc/<str:judge>.<str:fmt>", views.roc_figure, name="roc_figure"),
    path("jobs/<int:pk>/", views.job_progress, name="job_progress"),
]
