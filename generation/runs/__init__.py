"""Running stage II's generation requests (``execution``): claim rows, lease provider slots,
call the cached generator, store images and refusals. ``generation.tasks`` drives it from
Celery; ``generation.tasks.generation_run`` queues it."""
