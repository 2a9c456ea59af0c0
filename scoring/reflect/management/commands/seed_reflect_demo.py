"""python manage.py seed_reflect_demo [--reset]

The REFLECT part of ``make demo``: a small synthetic face set, answered by the scripted model
through the same path as ``run_reflect``, and its report (scoring/reflect/demo.py).
"""

from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand
from scoring.reflect import demo


class Command(BaseCommand):
    help = (
        "Seed the REFLECT demo audit once (kept on later runs; --reset rebuilds it): synthetic "
        "faces asked by the scripted model 'scripted-demo', and the set's report."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--reset", action="store_true", help="delete the REFLECT demo set and build it again"
        )

    def handle(self, *args, reset, **options):
        try:
            audit = demo.reflect_demo_seed(reset=reset)
        except demo.DemoFaceSetTaken as error:
            raise CommandError(str(error)) from error
        except KeyboardInterrupt:
            raise CommandError(
                "interrupted; the answers stored so far are kept: run `make demo` again to "
                "finish the REFLECT demo"
            ) from None
        verb = "created" if audit.created else "kept as it was"
        answers = ", ".join(f"{task} {count}" for task, count in audit.answers.items())
        self.stdout.write(
            self.style.WARNING(
                f"REFLECT demo set '{audit.face_set.name}' {verb} (SYNTHETIC faces, scripted "
                f"model '{demo.DEMO_MODEL}'): answers {answers}; report at "
                f"/staff/reflect/sets/{audit.face_set.slug}/"
            )
        )
