"""Read-only REST endpoints for staff and scripts (OpenAPI schema at /api/schema/).

All endpoints need a staff account (DRF's IsAdminUser, set as the default in settings).
"""

from django.db.models import Prefetch
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.api.serializers import (
    AnnotationRowSerializer,
    ItemSerializer,
    JudgmentRowSerializer,
    StudySerializer,
)
from annotations.exports import datasets as export_datasets
from annotations.models import AutomatedJudgment, Item, Study


class StudyList(generics.ListAPIView):
    queryset = Study.objects.all()
    serializer_class = StudySerializer


class StudyDetail(generics.RetrieveAPIView):
    queryset = Study.objects.all()
    serializer_class = StudySerializer
    lookup_field = "slug"


class StudyItems(generics.ListAPIView):
    serializer_class = ItemSerializer

    def get_queryset(self):
        study = get_object_or_404(Study, slug=self.kwargs["slug"])
        return (
            Item.objects.filter(study=study)
            .select_related("attribute_value")
            .prefetch_related(
                Prefetch(
                    "judgments",
                    queryset=AutomatedJudgment.objects.order_by("judge", "judge_version"),
                )
            )
            .order_by("item_id")
        )


class StudyAnnotations(APIView):
    serializer_class = AnnotationRowSerializer

    @extend_schema(responses=AnnotationRowSerializer(many=True))
    def get(self, request, slug):
        study = get_object_or_404(Study, slug=slug)
        dataset = export_datasets.annotation_export(study=study)
        return Response(AnnotationRowSerializer(dataset.rows, many=True).data)


class StudyJudgments(APIView):
    """The judgment export's rows (``export_annotations --judgments``)."""

    serializer_class = JudgmentRowSerializer

    @extend_schema(responses=JudgmentRowSerializer(many=True))
    def get(self, request, slug):
        study = get_object_or_404(Study, slug=slug)
        dataset = export_datasets.judgment_export(study=study)
        return Response(JudgmentRowSerializer(dataset.rows, many=True).data)
