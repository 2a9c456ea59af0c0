from django.urls import path

from annotations.api import views as api

app_name = "api"
urlpatterns = [
    path("studies/", api.StudyList.as_view(), name="study_list"),
    path("studies/<slug:slug>/", api.StudyDetail.as_view(), name="study_detail"),
    path("studies/<slug:slug>/items/", api.StudyItems.as_view(), name="study_items"),
    path(
        "studies/<slug:slug>/annotations/", api.StudyAnnotations.as_view(), name="study_annotations"
    ),
    path("studies/<slug:slug>/judgments/", api.StudyJudgments.as_view(), name="study_judgments"),
]
