from django.urls import path

from scoring.quality import views

app_name = "quality"
urlpatterns = [
    path("studies/<slug:slug>/annotators/", views.annotator_quality_list, name="annotators"),
    path(
        "studies/<slug:slug>/annotators/<int:pk>/",
        views.annotator_quality_detail,
        name="annotator",
    ),
    path(
        "studies/<slug:slug>/annotators/<int:pk>/<str:action>/",
        views.annotator_action,
        name="annotator_action",
    ),
]
