from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path
from drf_spectacular.views import SpectacularSwaggerSplitView

from annotations.api.schema import SchemaView


def favicon(request):
    """Browsers ask for /favicon.ico whatever the page says; the icon is a static file."""
    return redirect(static("favicon.ico"), permanent=True)


urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("favicon.ico", favicon, name="favicon"),
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema", template_name="api/swagger_ui.html"
        ),
        name="api-docs",
    ),
    path("", include("scoring.metrics.urls")),
    path("", include("scoring.design_validity.urls")),
    path("api/", include("annotations.api.urls")),
    path("", include("annotations.recruitment.urls")),
    path("", include("annotations.qualification.urls")),
    path("", include("annotations.guidelines.urls")),
    path("staff/judges/", include("scoring.urls")),
    path("staff/generation/", include("generation.urls")),
    path("staff/reflect/", include("scoring.reflect.urls")),
    path("staff/", include("scoring.report.urls")),
    path("staff/", include("scoring.comparison.urls")),
    path("staff/", include("scoring.quality.urls")),
    path("staff/", include("annotations.staff.urls")),
    path("adjudicate/", include("annotations.adjudication.urls")),
    path("", include("annotations.survey.urls")),
]
