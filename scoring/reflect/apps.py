from django.apps import AppConfig


class ReflectConfig(AppConfig):
    name = "scoring.reflect"
    label = "reflect"
    verbose_name = "REFLECT decision-task audits"
