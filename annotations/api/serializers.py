from rest_framework import serializers

from annotations.common.row_fields import ANNOTATION_ROW, JUDGMENT_ROW, RowTable
from annotations.models import AutomatedJudgment, Item, Study


class StudySerializer(serializers.ModelSerializer):
    class Meta:
        model = Study
        fields = [
            "slug",
            "name",
            "mode",
            "overlap_k",
            "label_scheme",
            "description",
            "is_synthetic_demo",
            "created_at",
        ]


class JudgmentSerializer(serializers.ModelSerializer):
    class Meta:
        model = AutomatedJudgment
        fields = [
            "judge",
            "judge_version",
            "hard_refusal",
            "score",
            "cue_label",
            "confidence",
            "error",
            "created_at",
        ]


class ItemSerializer(serializers.ModelSerializer):
    attribute = serializers.CharField(source="attribute_value.attribute")
    attribute_value = serializers.CharField(source="attribute_value.value")
    judgments = JudgmentSerializer(many=True, read_only=True)
    has_image = serializers.SerializerMethodField()

    class Meta:
        model = Item
        fields = [
            "item_id",
            "mode",
            "generator",
            "prompt",
            "base_prompt_id",
            "domain",
            "attribute",
            "attribute_value",
            "intent",
            "cue",
            "provider_refusal_code",
            "provider_refusal_message",
            "image_sha256",
            "has_image",
            "is_gold",
            "needs_review",
            "judgments",
        ]

    def get_has_image(self, item) -> bool:
        return bool(item.image)


_SERIALIZER_FIELDS = {
    "string": lambda **kw: serializers.CharField(allow_blank=True, **kw),
    "bool": serializers.BooleanField,
    "int64": serializers.IntegerField,
    "float64": serializers.FloatField,
    "timestamp": serializers.DateTimeField,
}


def row_serializer(table: RowTable, name: str) -> type[serializers.Serializer]:
    """A read-only serializer of ``table``'s rows: its fields, types, nullability and
    descriptions (the OpenAPI schema's), generated so the API cannot drift from the export."""
    fields = {
        field.name: _SERIALIZER_FIELDS[field.type](
            allow_null=field.nullable, help_text=field.description, read_only=True
        )
        for field in table.fields
    }
    doc = f"One exported {table.name} row (the same rows as the CSV/JSONL/Parquet export)."
    return type(name, (serializers.Serializer,), {**fields, "__doc__": doc})


AnnotationRowSerializer = row_serializer(ANNOTATION_ROW, "AnnotationRowSerializer")
JudgmentRowSerializer = row_serializer(JUDGMENT_ROW, "JudgmentRowSerializer")
