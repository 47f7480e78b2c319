"""Every judge URL (one that carries the judge's token) is served through `annotation.views.judge_view`."""

from annotation import urls

# Adopting is how a browser takes a judge over: it is the one token URL the adoption check cannot guard.
NOT_A_JUDGE_VIEW = {"annotation-adopt-judge"}


def test_every_judge_url_goes_through_judge_view():
    judge_urls = [pattern for pattern in urls.urlpatterns if "<str:token>" in str(pattern.pattern)]
    assert len(judge_urls) > len(NOT_A_JUDGE_VIEW)
    guarded = [p for p in judge_urls if p.name not in NOT_A_JUDGE_VIEW]
    unchecked = [p.name for p in guarded if not hasattr(p.callback, "judge_steps")]
    assert unchecked == []
