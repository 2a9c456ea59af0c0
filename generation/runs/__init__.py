"""Running stage II's generation requests (``execution``): claim rows, lease provider slots,
call the cached generator, store images and refusals. ``generation.tasks`` drives it from
Celery; ``generation.services.generation_run`` queues it."""
