from django.urls import path

from annotations.survey import views

app_name = "annotations"
urlpatterns = [
    path("", views.home, name="home"),
    path("guidelines/", views.guidelines, name="guidelines"),
    path("language/", views.language_set, name="language"),
    path("batches/<int:batch_id>/next/", views.batch_next, name="batch_next"),
    path("assignments/<int:pk>/", views.assignment_detail, name="assignment"),
    path("assignments/<int:pk>/answer/", views.assignment_answer, name="answer"),
    path("assignments/<int:pk>/skip/", views.assignment_skip, name="skip"),
    path("assignments/<int:pk>/decline/", views.assignment_decline, name="decline"),
    path("assignments/<int:pk>/reveal/", views.assignment_reveal, name="reveal"),
    path("items/<int:pk>/image/", views.item_image, name="item_image"),
    path(
        "items/<int:pk>/source-image/",
        views.item_image,
        {"which": "source_image"},
        name="item_source_image",
    ),
    path("studies/<slug:slug>/my-answers/", views.my_answers, name="my_answers"),
]
