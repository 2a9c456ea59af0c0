"""python manage.py run_reflect --set NAME --model NAME --tasks 2afc,mcq,salary

or ``--endpoint URL --api-model ID`` for any OpenAI-compatible server. Runs in this process
and returns only when every planned request has a stored answer (exit 0), or with an error
listing what is still missing (rerun to ask only those). An endpoint that cannot be reached
stops it in one line (a pre-flight request, then after a run of transport errors), and Ctrl-C
stops it at once, keeping every stored chunk.
"""

import os
import sys

from django.conf import settings
from django.core.management.base import CommandError
from tqdm import tqdm

from annotations.management.helpers import SEED, BaseCommand, bounded_float, bounded_int
from scoring.reflect import selectors, services
from scoring.reflect.backends import BackendConfigError, inline_choice, model_choice
from scoring.reflect.execution import BackendUnavailable
from scoring.reflect.protocol import TASKS

from ._common import face_set_or_error


class Command(BaseCommand):
    help = "Ask a VLM every REFLECT question of a face set (resumable: only missing answers)."

    def add_arguments(self, parser):
        parser.add_argument("--set", dest="name", required=True)
        parser.add_argument("--model", help="a name from settings.ACRB_VLM_MODELS")
        parser.add_argument(
            "--endpoint", help="OpenAI-compatible base URL, e.g. http://host:8000/v1"
        )
        parser.add_argument(
            "--api-model", help="model id sent to --endpoint (also the report's name)"
        )
        parser.add_argument("--api-key-env", help="environment variable holding the API key")
        parser.add_argument("--tasks", default="2afc,mcq", help="comma-separated: 2afc,mcq,salary")
        parser.add_argument(
            "--concurrency", type=bounded_int(1, 1_000), help="API requests in flight at once"
        )
        parser.add_argument(
            "--chunk-size",
            type=bounded_int(1, 100_000),
            help="requests per backend call / stored chunk",
        )
        parser.add_argument("--temperature", type=bounded_float(0, 10))
        parser.add_argument(
            "--samples",
            type=bounded_int(1, 1_000),
            help="MCQ answers per image (needs --temperature > 0)",
        )
        parser.add_argument("--max-new-tokens", type=bounded_int(1, 1_000_000))
        parser.add_argument("--seed", type=SEED)
        parser.add_argument("--explain", action="store_true", help="MCQ explanation variant")
        parser.add_argument(
            "--logprobs",
            action="store_true",
            help="also store answer-option probabilities (logprobs / likelihoods)",
        )

    def handle(self, *args, **options):
        tasks = [t.strip() for t in options["tasks"].split(",") if t.strip()]
        unknown = sorted(set(tasks) - set(TASKS))
        if unknown or not tasks:
            raise CommandError(f"unknown tasks {unknown}; choose from {', '.join(TASKS)}")
        face_set = face_set_or_error(options["name"])
        choice = self._choice(options)
        names = ("temperature", "samples", "max_new_tokens", "seed")
        decoding = {name: options[name] for name in names if options[name] is not None}
        if options["logprobs"]:
            decoding["logprobs"] = True
        try:
            run = services.run_get_or_create(
                face_set=face_set, choice=choice, decoding=decoding, explain=options["explain"]
            )
        except ValueError as error:
            raise CommandError(str(error)) from error
        self.verbose = options["verbosity"] > 0
        self._say(f"run {run.pk} ({run.label}), prompt version {run.prompt_version}")
        try:
            for task in tasks:
                self._run_task(run, choice, task, options)
        except BackendUnavailable as error:
            raise CommandError(str(error)) from None
        except KeyboardInterrupt:
            self._stopped(run, tasks)
        self._check_complete(run, tasks)

    def _stopped(self, run, tasks):
        """Ctrl-C: say what is kept, then leave at once. The API client's worker threads may be
        waiting on a request or a back-off; a normal exit would wait for them (50 s was
        measured once), so the process ends here, after the stored chunks were committed."""
        progress = selectors.run_progress(run=run)
        stored = {task: progress[task]["answered"] for task in tasks}
        self.stdout.write(
            f"Stopped: answers stored so far {stored}; rerun the same command to ask the rest."
        )
        self.stdout.flush()
        sys.stderr.flush()
        exit_now(130)

    def _choice(self, options):
        try:
            if options["endpoint"] or options["api_model"]:
                if options["model"] or not (options["endpoint"] and options["api_model"]):
                    raise CommandError("give --model NAME, or --endpoint URL with --api-model ID")
                extra = {"api_key_env": options["api_key_env"]} if options["api_key_env"] else {}
                return inline_choice(
                    endpoint=options["endpoint"],
                    api_model=options["api_model"],
                    concurrency=options["concurrency"] or 16,
                    **extra,
                )
            if not options["model"]:
                raise CommandError("give --model NAME, or --endpoint URL with --api-model ID")
            return model_choice(options["model"], settings.ACRB_VLM_MODELS)
        except BackendConfigError as error:
            raise CommandError(str(error)) from error

    def _run_task(self, run, choice, task, options):
        bar = tqdm(desc=task, unit="answer", disable=options["verbosity"] == 0)

        def progress(done, total):
            bar.total = total
            bar.n = done
            bar.refresh()

        try:
            summary = services.run_execute(
                run=run,
                choice=choice,
                task=task,
                concurrency=options["concurrency"],
                chunk_size=options["chunk_size"],
                progress=progress,
            )
        finally:
            bar.close()
        statuses = (
            ", ".join(f"{k} {v}" for k, v in sorted(summary["statuses"].items()))
            or "nothing to ask"
        )
        self.stdout.write(
            f"{task}: {summary['planned']} planned, {summary['asked']} asked ({statuses})"
        )

    def _check_complete(self, run, tasks):
        progress = selectors.run_progress(run=run)
        missing = {task: progress[task]["planned"] - progress[task]["answered"] for task in tasks}
        if any(missing.values()):
            raise CommandError(
                f"not every answer is stored: missing {missing} (transport errors are kept with "
                "their message; rerun the same command to ask only those again)"
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"every answer stored: {dict((t, progress[t]['answered']) for t in tasks)}"
            )
        )

    def _say(self, message):
        if self.verbose:
            self.stdout.write(message)


def exit_now(code: int) -> None:
    os._exit(code)
