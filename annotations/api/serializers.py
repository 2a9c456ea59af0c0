from rest_framework import serializers

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


class AnnotationRowSerializer(serializers.Serializer):
    """One exported annotation row (the same rows as the CSV/JSONL export)."""

    item_id = serializers.CharField()
    annotator = serializers.CharField()
    annotator_group = serializers.CharField(allow_blank=True)
    batch = serializers.CharField()
    is_gold = serializers.BooleanField()
    attribute = serializers.CharField()
    attribute_value = serializers.CharField()
    base_prompt_id = serializers.CharField(allow_blank=True)
    domain = serializers.CharField(allow_blank=True)
    generator = serializers.CharField(allow_blank=True)
    mode = serializers.CharField()
    hard_refusal = serializers.BooleanField()
    cue = serializers.CharField(allow_null=True)
    note = serializers.CharField(allow_blank=True)
    broken_image = serializers.BooleanField()
    served_at = serializers.DateTimeField(allow_null=True)
    submitted_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    seconds_to_answer = serializers.FloatField(allow_null=True)
    too_fast = serializers.BooleanField()
    revision = serializers.IntegerField()
    source = serializers.CharField()
    language = serializers.CharField(allow_blank=True)
