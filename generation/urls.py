from django.urls import path

from generation import views

app_name = "generation"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("plans/new/", views.plan_new, name="plan_new"),
    path("studies/<slug:slug>/", views.study_generation, name="study_generation"),
    path("studies/<slug:slug>/plan/", views.study_plan, name="study_plan"),
    path("studies/<slug:slug>/rephrasings/", views.rephrasing_list, name="rephrasing_list"),
    path("studies/<slug:slug>/generators/", views.generator_attach, name="generator_attach"),
    path("studies/<slug:slug>/start/", views.generation_start, name="generation_start"),
    path("studies/<slug:slug>/progress/", views.generation_progress, name="generation_progress"),
    path("studies/<slug:slug>/requests/", views.request_list, name="request_list"),
    path("faces/", views.face_set_list, name="face_set_list"),
    path("faces/<slug:slug>/", views.face_set_detail, name="face_set_detail"),
    path(
        "faces/<slug:slug>/edits/<int:edit_id>/accept/",
        views.face_edit_accept,
        name="face_edit_accept",
    ),
    path("faces/<slug:slug>/images/<str:kind>/<int:pk>/", views.face_image, name="face_image"),
]
