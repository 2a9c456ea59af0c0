"""Logs an operator can read: a 4xx answer is one line, a traceback only for a 5xx.

Django logs every 4xx on ``django.request`` with the exception that caused it, so each 403 an
annotator can provoke wrote a full traceback. ``ClientErrorsOnOneLine`` (installed on that
logger by settings.LOGGING) drops the exception from records of answers below 500.
"""

from __future__ import annotations

import logging


class ClientErrorsOnOneLine(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if status is not None and status < 500:
            record.exc_info = None
            record.exc_text = None
            record.stack_info = None
        return True
