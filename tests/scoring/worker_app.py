"""The project's Celery app for the worker tests, with Redis redelivery made fast.

On Redis, a message a dead worker had taken comes back once it has been unacknowledged for
``visibility_timeout`` seconds (an hour by default); the kill test cannot wait that long.
Production keeps a timeout above the longest task (docs/judges.md, "Workers").
"""

from acrb_web.celery import app

if app.conf.broker_url.startswith("redis"):
    app.conf.broker_transport_options = {
        **(app.conf.broker_transport_options or {}),
        "visibility_timeout": 3,
        "unacked_restore_interval": 1,
        "unacked_restore_throttle": 1,
    }

__all__ = ["app"]
