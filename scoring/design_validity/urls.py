from django.urls import path

from scoring.design_validity import views

app_name = "design_validity"
urlpatterns = [
    path(
        "staff/studies/<slug:slug>/design-validity/",
        views.design_validity,
        name="design_validity",
    ),
    path(
        "staff/studies/<slug:slug>/design-validity/run/",
        views.design_validity_start,
        name="design_validity_start",
    ),
]
