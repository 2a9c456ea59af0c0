from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("", include("scoring.metrics.urls")),
    path("api/", include("annotations.api.urls")),
    path("", include("annotations.recruitment.urls")),
    path("", include("annotations.guidelines.urls")),
    path("staff/judges/", include("scoring.urls")),
    path("staff/generation/", include("generation.urls")),
    path("staff/reflect/", include("scoring.reflect.urls")),
    path("staff/", include("scoring.report.urls")),
    path("staff/", include("scoring.quality.urls")),
    path("staff/", include("annotations.staff.urls")),
    path("adjudicate/", include("annotations.adjudication.urls")),
    path("", include("annotations.survey.urls")),
]
