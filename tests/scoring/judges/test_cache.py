from scoring.judges.cache import CachedJudge, MemoryCacheStore, cache_key
from scoring.judges.records import ItemInput
from tests.scoring.judges.fakes import FixedJudge


def test_key_depends_on_each_part():
    base = cache_key("j", "1", "p", "h")
    assert base == cache_key("j", "1", "p", "h")
    assert len({base, cache_key("k", "1", "p", "h"), cache_key("j", "2", "p", "h"),
                cache_key("j", "1", "q", "h"), cache_key("j", "1", "p", "g")}) == 5  # fmt: skip


def test_only_changes_are_rescored(make_image):
    red, blue = make_image((255, 0, 0)), make_image((0, 0, 255))
    red_copy = make_image((255, 0, 0))  # same bytes at another path
    judge = FixedJudge(
        "j", {"a": ("erased", 0.9), "b": ("retained", 0.8), "c": ("erased", 0.9), "d": ("x", 1.0)}
    )
    cached = CachedJudge(judge, MemoryCacheStore())
    first = cached.judge_items([ItemInput("a", red, cue="hat"), ItemInput("b", blue, cue="hat")])
    assert not any(o.cached for o in first) and judge.seen == ["a", "b"]
    again = cached.judge_items(
        [ItemInput("c", red_copy, cue="hat"), ItemInput("d", blue, cue="scarf")]
    )
    assert again[0].cached and again[0].item_id == "c" and again[0].label == "erased"
    assert not again[1].cached  # a different cue is a different prompt
    assert judge.seen == ["a", "b", "d"]
    judge.version = "2"
    assert (
        not CachedJudge(judge, cached.store).judge_items([ItemInput("a", red, cue="hat")])[0].cached
    )


def test_errors_are_not_cached_and_unhashable_items_pass_through(make_image, tmp_path):
    path = make_image((1, 2, 3))
    judge = FixedJudge("j", {"e": (None, None, "boom"), "m": ("erased", 1.0)})
    cached = CachedJudge(judge, MemoryCacheStore())
    cached.judge_items([ItemInput("e", path)])
    cached.judge_items([ItemInput("e", path)])
    assert judge.seen == ["e", "e"]
    missing = ItemInput("m", str(tmp_path / "absent.png"))
    cached.judge_items([missing])
    cached.judge_items([missing])
    assert judge.seen[-2:] == ["m", "m"]
