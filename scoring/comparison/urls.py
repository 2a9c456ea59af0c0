from django.urls import path

from scoring.comparison import views

app_name = "comparison"
urlpatterns = [path("compare/", views.compare_models, name="compare_models")]
