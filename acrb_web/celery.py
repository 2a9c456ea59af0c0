"""The Celery app. Broker and queues come from settings (CELERY_* names)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "acrb_web.settings")

app = Celery("acrb_web")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Task modules of packages that are not apps of their own.
app.autodiscover_tasks(["scoring.design_validity", "scoring.report"])
