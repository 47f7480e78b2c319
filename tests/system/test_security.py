"""Hostile text renders inert in a real browser, and every POST form needs its CSRF token.

The browser tests put HTML/JS payloads in everything a judge or a researcher
reads (sentences, so the word-diff highlight too; campaign name and
description; consent text; questions; completion code; corpus; crowd id) and
walk the pages in headless Chromium. Each payload would set `window.__pwned`
or insert an element if it were rendered as markup; neither may happen.
"""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import get_resolver, reverse
from playwright.sync_api import expect

from annotation.controls import protocol_of
from annotation.models import Judge
from campaigns.importers import import_pairs, parse_corpus
from campaigns.models import Campaign
from tests.factories import make_judge

PAYLOADS = [
    "<script>window.__pwned=1</script>",
    '<img src=x class=injected onerror="window.__pwned=1">',
    '"><svg class=injected onload="window.__pwned=1"></svg>',
    "</mark><img src=x class=injected onerror=window.__pwned=1><mark>",
    "<div class=injected hx-get=/accounts/logout/ hx-trigger=load>x</div>",
    "'\"><iframe class=injected srcdoc='<script>parent.__pwned=1</script>'></iframe>",
]
INJECTED = "img.injected, svg.injected, div.injected, iframe.injected, script:not([src])"


def hostile_pair(i):
    # Source and hypothesis differ word by word, so the payloads land inside <mark> highlights.
    payload = PAYLOADS[i % len(PAYLOADS)]
    return f"Alpha {payload} beta", f"Gamma {payload} delta {PAYLOADS[(i + 1) % len(PAYLOADS)]}"


def hostile_campaign(owner=None):
    campaign = Campaign.objects.create(
        slug="hostile",
        name=f"Name {PAYLOADS[1]}",
        description=f"About {PAYLOADS[2]}",
        pairs_per_judge=1,
        created_by=owner,
    )
    protocol = protocol_of(campaign)
    protocol.control_share = 0
    protocol.consent_text = f"Consent {PAYLOADS[3]}"
    protocol.questionnaire = f"Question {PAYLOADS[1]}?"
    protocol.completion_code = PAYLOADS[2][:100]
    protocol.save()
    # Each training pair's explanation (shown after the answer) carries a payload too.
    lines = "".join(
        f"{source}\t{hypothesis}\tWhy {PAYLOADS[i % len(PAYLOADS)]}\n"
        for i, (source, hypothesis) in enumerate(map(hostile_pair, range(5)))
    )
    rows = parse_corpus(f"source\thypothesis\texplanation\n{lines}".encode(), format="tsv")
    campaign.replace_training_pairs(rows)
    source, hypothesis = hostile_pair(5)
    import_pairs(campaign, f"source\thypothesis\tcorpus\n{source}\t{hypothesis}\t{PAYLOADS[0]}\n".encode())
    return campaign


def assert_inert(page, where):
    assert page.evaluate("typeof window.__pwned") == "undefined", f"a payload ran on {where}"
    assert page.locator(INJECTED).count() == 0, f"a payload became an element on {where}"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_payloads_stay_text_on_every_judge_page(live_server, page):
    hostile_campaign()
    page.goto(f"{live_server.url}/j/hostile/")
    assert_inert(page, "welcome")
    expect(page.locator("body")).to_contain_text("Consent </mark><img")
    page.locator("input[name=consent]").check()
    page.locator("form button.primary[type=submit]").click()
    page.locator("input[name=english_level]").first.check()
    page.locator("form button.primary[type=submit]").click()
    assert_inert(page, "guidelines")
    page.locator("form button.primary[type=submit]").click()
    for step in range(6):  # five training pairs, then the real one, all swapped in by htmx
        expect(page.locator("#item .sentence").first).to_contain_text("<")
        assert_inert(page, f"item {step + 1}")
        assert "__pwned" in " ".join(page.locator("#item .sentence").all_inner_texts()), "payloads show as text"
        assert page.locator("#item mark").count() > 0, "the diff highlight should be exercised"
        shown = page.locator("#item").get_attribute("data-assignment")
        page.locator("#item button.answer").first.click()
        page.wait_for_function(
            "shown => { const item = document.querySelector('#item');"
            " return !item || item.dataset.assignment !== shown; }",
            arg=shown,
        )
        if step < 5:  # a training answer: its feedback, then on
            expect(page.locator("#item.feedback .explanation")).to_contain_text("Why ")
            assert_inert(page, f"feedback {step + 1}")
            shown = page.locator("#item .explanation").inner_text()
            assert PAYLOADS[step % len(PAYLOADS)] in shown, "payloads show as text"
            page.get_by_role("link", name="Continue").click()
    expect(page.locator("body")).to_contain_text("Question <img")
    assert_inert(page, "questionnaire")
    page.locator("form button.primary[type=submit]").click()
    expect(page.locator(".completion-code")).to_contain_text("<svg")
    assert_inert(page, "thanks")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_payloads_stay_text_on_every_researcher_page(live_server, page, researcher):
    campaign = hostile_campaign(owner=researcher)
    judge = make_judge(campaign)
    Judge.objects.filter(pk=judge.pk).update(crowd_participant=PAYLOADS[1][:100])
    client = Client()
    client.force_login(researcher)
    page.context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    pages = [
        reverse("campaigns-list-campaigns"),
        reverse("annotation-show-campaign", args=["hostile"]),
        reverse("annotation-edit-campaign", args=["hostile"]),
        reverse("reports-show-report", args=["hostile"]),
        reverse("reports-show-cross-report"),
        reverse("generation-list-runs", args=["hostile"]),
        "/admin/campaigns/pair/",
        "/admin/campaigns/campaign/",
    ]
    for path in pages:
        response = page.goto(f"{live_server.url}{path}")
        assert response.status < 500, f"{path}: HTTP {response.status}"
        page.wait_for_load_state("networkidle")
        assert_inert(page, path)
    page.goto(f"{live_server.url}{reverse('annotation-show-campaign', args=['hostile'])}")
    expect(page.locator("body")).to_contain_text('About "><svg')


# CSRF -----------------------------------------------------------------------------------------

# Every URL that takes a POST from a form, with the arguments to reach it.
JUDGE_POSTS = [
    ("annotation-show-welcome", {}),
    ("annotation-ask-english-level", {"token": True}),
    ("annotation-show-guidelines", {"token": True}),
    ("annotation-record-answer", {"token": True}),
    ("annotation-show-questionnaire", {"token": True}),
    ("annotation-adopt-judge", {"token": True}),
]
RESEARCHER_POSTS = [
    ("campaigns-create-campaign", {}),
    ("annotation-edit-campaign", {"slug": True}),
    ("annotation-upload-corpus", {"slug": True}),
    ("campaigns-toggle-open", {"slug": True}),
    ("annotation-toggle-judge-exclusion", {"slug": True, "judge_id": True}),
    ("generation-create-run", {"slug": True}),
    ("generation-cancel-run", {"slug": True, "pk": 1}),
    ("generation-resume-run", {"slug": True, "pk": 1}),
    ("generation-select-run", {"slug": True, "pk": 1}),
    ("generation-create-template", {"slug": True}),
    ("generation-preview-template", {"slug": True}),
    ("campaigns-show-api-key", {}),
    ("campaigns-show-trash", {}),
    ("reports-train-detector", {"slug": True}),
    ("reports-draw-active-choice", {"slug": True}),
    ("logout", {}),
]
ANONYMOUS_POSTS = [("login", {}), ("set_language", {})]
# URL names that take no form POST (pages, downloads, the API and admin have their own checks below).
GET_ONLY = {
    "annotation-show-item",
    "annotation-show-thanks",
    "campaigns-list-campaigns",
    "annotation-show-campaign",
    "scoring-show-progress",
    "scoring-show-queues",
    "reports-export-pairs",
    "reports-export-signatures",
    "reports-export-judgments",
    "reports-export-taggings",
    "reports-download-task-table",
    "generation-list-runs",
    "generation-show-run",
    "generation-edit-template",
    "reports-show-report",
    "reports-show-cross-report",
    "reports-download-report-table",
    "reports-download-report-latex",
    "reports-download-report-html",
    "reports-show-report-figure",
    "reports-show-detector",
    "reports-show-active-choice",
    "api-schema",
}


def _url(name, kwargs, campaign, judge):
    values = {"slug": campaign.slug, "token": judge.token, "judge_id": judge.pk}
    args = {key: values[key] if value is True else value for key, value in kwargs.items()}
    if name.startswith("annotation-"):
        args.setdefault("slug", campaign.slug)
    return reverse(name, kwargs=args)


@pytest.fixture
def site(researcher):
    campaign = Campaign.objects.create(slug="csrf", name="CSRF", created_by=researcher)
    return campaign, make_judge(campaign)


@pytest.mark.django_db
@pytest.mark.parametrize("name, kwargs", JUDGE_POSTS + RESEARCHER_POSTS + ANONYMOUS_POSTS)
def test_a_post_without_a_csrf_token_is_refused(site, researcher, name, kwargs):
    campaign, judge = site
    client = Client(enforce_csrf_checks=True)
    if (name, kwargs) in RESEARCHER_POSTS:
        client.force_login(researcher)
    client.cookies[f"parasol_judge_{campaign.pk}"] = judge.token
    url = _url(name, kwargs, campaign, judge)
    assert client.post(url, {"consent": "yes", "answer": "same_meaning", "assignment": 1}).status_code == 403
    if name == "generation-preview-template":
        return  # its page loads a model's tokenizer: the 403 above is the check
    client.get(url)  # sets the CSRF cookie where the page has a form
    token = client.cookies.get("csrftoken")
    if token is not None:  # the same request with the token gets past the CSRF check
        response = client.post(url, {"csrfmiddlewaretoken": token.value})
        assert response.status_code != 403, f"{name} refused even with a token"


@pytest.mark.django_db
def test_the_api_needs_a_csrf_token_with_session_login_and_none_with_a_token(researcher):
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    body = {"slug": "viasession", "name": "Via session"}
    assert client.post("/api/campaigns/", body, content_type="application/json").status_code == 403
    admin = Client(enforce_csrf_checks=True)
    get_user_model().objects.filter(pk=researcher.pk).update(is_superuser=True)
    admin.force_login(researcher)
    assert admin.post("/admin/campaigns/campaign/add/", {"slug": "viaadmin"}).status_code == 403


def test_every_url_is_covered_by_the_csrf_tests():
    names = {name for name in get_resolver().reverse_dict if isinstance(name, str)}
    names = {name for name in names if not name.startswith(("api-campaign-", "api-generation-")) and name != "api-root"}
    covered = {name for name, _ in JUDGE_POSTS + RESEARCHER_POSTS + ANONYMOUS_POSTS} | GET_ONLY
    assert names - covered == set(), "a new URL: add it to the CSRF tests (as a form POST or as GET only)"
