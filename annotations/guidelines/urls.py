from django.urls import path

from annotations.guidelines import staff_views, views

app_name = "guidelines"
urlpatterns = [
    path("studies/<slug:slug>/guidelines/", views.study_guidelines, name="study"),
    path(
        "staff/studies/<slug:slug>/guidelines/",
        staff_views.staff_guidelines,
        name="staff_page",
    ),
    path(
        "staff/studies/<slug:slug>/guidelines/examples/",
        staff_views.staff_example_set,
        name="staff_example_set",
    ),
    path(
        "staff/guideline-examples/<int:pk>/remove/",
        staff_views.staff_example_remove,
        name="staff_example_remove",
    ),
]
