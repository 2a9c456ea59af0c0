from django.apps import AppConfig


class AnnotationsConfig(AppConfig):
    name = "annotations"
    verbose_name = "Human validation"

    def ready(self):
        from annotations import checks  # noqa: F401  (registers the system checks)
