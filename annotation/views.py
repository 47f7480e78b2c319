"""The judge protocol: welcome, English level, guidelines, training, pairs, thanks.

Judges are anonymous: a random token in the URL and in a cookie identifies
them, so the same browser resumes where it stopped. A browser whose cookie
does not hold the token (someone else's resume link) is asked before it
adopts that judge. The cookie is set in two places only, both POSTs: joining and
adopting; no other request (HEAD, OPTIONS, a GET of a token URL) sets or refreshes it.

The order of the steps is kept here, not by the pages' links: every judge view is wrapped
in `judge_view`, which names the steps it serves (`Judge.step`), and an answer is taken
only for the pair on show (`assignment.is_on_show`).
"""

from functools import wraps

from django.conf import settings
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from campaigns.models import Campaign
from campaigns.task_types import task_type_of
from parasol.db import retry_if_locked

from . import assignment as assign
from . import joining
from .controls import protocol_of
from .diff import Segment, word_diff
from .forms import EnglishLevelForm
from .models import Judge, Judgment, Step


def _cookie_name(campaign):
    return f"parasol_judge_{campaign.pk}"


def _remember_judge(response, judge):
    response.set_cookie(
        _cookie_name(judge.campaign),
        judge.token,
        max_age=settings.PARASOL_JUDGE_COOKIE_AGE_DAYS * 86400,
        httponly=True,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,
    )
    return response


def _get_judge(request, slug, token):
    """A judge reaches only their own campaign and assignments; anything else is a 404.

    `token` is the judge's secret, or `Judge.path_token` when this browser's cookie holds it.
    """
    judges = Judge.objects.select_related("campaign").filter(campaign__deleted_at__isnull=True, campaign__slug=slug)
    if token == Judge.path_token:
        campaign = Campaign.objects.filter(slug=slug).first()
        token = request.COOKIES.get(_cookie_name(campaign)) if campaign is not None else None
    judge = judges.filter(token=token).first() if token else None
    if judge is None:
        raise Http404("No such judge in this campaign.")
    return judge


def _holds_token(request, judge):
    return request.COOKIES.get(_cookie_name(judge.campaign)) == judge.token


def _judge_page(request, slug, token):
    """The judge, and a confirmation page instead when this browser has not adopted them yet.

    A link that carries someone else's token must not silently make this browser
    work (or keep working) inside their judge; a POST from such a browser stores nothing.
    """
    judge = _get_judge(request, slug, token)
    if not _holds_token(request, judge):  # whatever the method: only the adopt POST takes a judge over
        status = 200 if request.method in ("GET", "HEAD") else 403
        return judge, render(
            request, "annotation/adopt.html", {"judge": judge, "campaign": judge.campaign}, status=status
        )
    return judge, None


# The methods a judge's page answers; anything else (OPTIONS, PUT, DELETE...) is a 405, never a page.
PAGE = ("GET", "HEAD")
FORM = ("GET", "HEAD", "POST")
ACTION = ("POST",)


@require_POST
def adopt(request, slug, token):
    """This browser continues the judge whose link it opened, after saying so."""
    judge = _get_judge(request, slug, token)
    return _remember_judge(redirect("annotation-show-item", slug, Judge.path_token), judge)


# The page that serves each step.
STEP_PAGES = {
    Step.LEVEL: "annotation-ask-english-level",
    Step.GUIDELINES: "annotation-show-guidelines",
    Step.TRAINING: "annotation-show-item",
    Step.PAIRS: "annotation-show-item",
}


def _back_to_step(request, judge, problem=None):
    """Refuse what the judge's step does not allow, storing nothing: a page request goes to the step's
    page; anything else is a 409 that names the step and links to it (htmx is sent there)."""
    step = judge.step
    url = reverse(STEP_PAGES[step], args=[judge.campaign.slug, Judge.path_token])
    if request.method in ("GET", "HEAD"):
        return redirect(url)
    context = {"campaign": judge.campaign, "step": step, "step_url": url, "problem": problem}
    response = render(request, "annotation/out_of_step.html", context, status=409)
    if request.htmx:
        response["HX-Redirect"] = url
    return response


def judge_view(*steps, methods=PAGE, at_the_end=False):
    """Let the URL's judge into the view only at one of `steps` (with `at_the_end`: only once no pair is
    left to them); send anyone else back to their step. The view is called as view(request, judge).

    Every judge view goes through here, so no request, whatever its method, skips a step: only
    `methods` are answered (any other is a 405), a browser that has not adopted the judge is asked
    first, and a request that meets SQLite locked is run again.
    """

    def decorate(view):
        @require_http_methods(list(methods))
        @retry_if_locked
        @wraps(view)
        def checked(request, slug, token):
            judge, confirm = _judge_page(request, slug, token)
            if confirm is not None:
                return confirm
            if judge.step not in steps or (at_the_end and assign.next_assignment(judge) is not None):
                return _back_to_step(request, judge)
            return view(request, judge)

        checked.judge_steps = steps  # what the URL test reads: every judge URL is served through here
        return checked

    return decorate


@require_http_methods(list(FORM))
@retry_if_locked
def welcome(request, slug):
    campaign = get_object_or_404(Campaign.objects.live(), slug=slug)
    crowd = joining.crowd_ids(request.POST if request.method == "POST" else request.GET)
    judge = joining.returning_judge(campaign, request.COOKIES.get(_cookie_name(campaign)))
    if judge is not None:  # the cookie already holds them
        return redirect("annotation-show-item", slug, Judge.path_token)
    reason = joining.why_unavailable(campaign)
    if reason is not None:
        return render(request, "annotation/unavailable.html", {"campaign": campaign, "reason": reason})
    context = {
        "campaign": campaign,
        "crowd": crowd,
        "protocol": protocol_of(campaign),
        "task_type": task_type_of(campaign),
        "expect": joining.what_to_expect(campaign),
    }
    if request.method == "POST":
        if request.POST.get("consent") != "yes":
            return render(request, "annotation/welcome.html", context | {"consent_missing": True})
        key = joining.join_key(request)
        if joining.joins_exceeded(campaign, key):
            return render(
                request,
                "annotation/unavailable.html",
                {"campaign": campaign, "reason": joining.Unavailable.BUSY},
                status=429,
            )
        judge = joining.join(campaign, key=key, crowd=crowd)
        if judge is None:
            reason = joining.why_unavailable(campaign) or joining.Unavailable.EXHAUSTED
            return render(request, "annotation/unavailable.html", {"campaign": campaign, "reason": reason})
        return _remember_judge(redirect("annotation-ask-english-level", slug, Judge.path_token), judge)
    return render(request, "annotation/welcome.html", context)


@judge_view(Step.LEVEL, Step.GUIDELINES, Step.TRAINING, Step.PAIRS, methods=FORM)
def english_level(request, judge):
    if judge.judgments.filter(is_training=False).exists():
        # Locked once real judging starts: results are broken down by the level given before.
        return _back_to_step(request, judge)
    form = EnglishLevelForm(request.POST if request.method == "POST" else None, instance=judge)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("annotation-show-guidelines", judge.campaign.slug, Judge.path_token)
    return render(request, "annotation/english_level.html", {"judge": judge, "form": form})


@judge_view(Step.GUIDELINES, Step.TRAINING, Step.PAIRS, methods=FORM)
def guidelines(request, judge):
    if request.method == "POST":
        if judge.guidelines_read_at is None:
            judge.guidelines_read_at = timezone.now()
            judge.save(update_fields=["guidelines_read_at"])
        return redirect("annotation-show-item", judge.campaign.slug, Judge.path_token)
    task_type = task_type_of(judge.campaign)
    context = {"judge": judge, "task_type": task_type, "examples": task_type.guideline_examples()}
    return render(request, "annotation/guidelines.html", context)


# The roles a sentence is labelled with when the task type's questions name them.
ROLE_TITLES = {"source": gettext_lazy("Original"), "hypothesis": gettext_lazy("Paraphrase")}


def _shown_sentences(assignment, task_type):
    """The pair as the judge sees it: in the assignment's order, highlighted as the task type shows it, by role."""
    top, bottom = assignment.top_sentence, assignment.bottom_sentence
    if task_type.highlights(assignment.judge.campaign):
        top, bottom = word_diff(top, bottom)
    else:
        top, bottom = [Segment(top, False)], [Segment(bottom, False)]
    bottom_side = "hypothesis" if assignment.top == "source" else "source"
    roles = (ROLE_TITLES[assignment.top], ROLE_TITLES[bottom_side]) if task_type.source_first else ("", "")
    return [
        {"id": "sentence-top", "segments": top, "role": roles[0]},
        {"id": "sentence-bottom", "segments": bottom, "role": roles[1]},
    ]


def _item_context(judge, current):
    assign.mark_shown(current)
    task_type = task_type_of(judge.campaign)
    return {
        "judge": judge,
        "campaign": judge.campaign,
        "assignment": current,
        "sentences": _shown_sentences(current, task_type),
        "task_type": task_type,
        "progress": assign.judge_progress(judge),
    } | task_type.judge_context(current)


def _closed(request, judge):
    return render(
        request, "annotation/unavailable.html", {"campaign": judge.campaign, "reason": joining.Unavailable.CLOSED}
    )


@judge_view(Step.TRAINING, Step.PAIRS)
def show_item(request, judge):
    if not judge.campaign.is_open:
        return _closed(request, judge)
    current = assign.next_assignment(judge)
    if current is None:
        return redirect("annotation-show-thanks", judge.campaign.slug, Judge.path_token)
    return _render_item(request, judge, current)


def _render_item(request, judge, current, problem=None, status=200):
    """The pair page (its partial for htmx), with the reason the last answer was refused, if any."""
    context = _item_context(judge, current) | {"answer_problem": problem}
    if request.htmx:
        return render(request, "annotation/_item.html", context, status=status)
    context["examples"] = context["task_type"].guideline_examples()
    return render(request, "annotation/item.html", context, status=status)


@judge_view(Step.TRAINING, Step.PAIRS, methods=ACTION)
def answer(request, judge):
    """Store the answer to the pair on show; a repeat of an answered one (double click) stores nothing."""
    if not judge.campaign.is_open:
        return _closed(request, judge)
    current = _posted_assignment(judge, request.POST.get("assignment"))
    if current is None:
        return HttpResponseBadRequest("This pair is not assigned to you; nothing was stored.")
    if hasattr(current, "judgment"):
        return _answered(request, judge, current.judgment)
    if not assign.is_on_show(judge, current):
        stored = Judgment.objects.filter(assignment=current).first()
        if stored is not None:  # a repeat whose first was stored meanwhile (double click): answered like the first
            return _answered(request, judge, stored)
        return _back_to_step(request, judge, problem=_("This pair is not the one on show to you"))
    task_type = task_type_of(judge.campaign)
    form = task_type.answer_form(request.POST)
    if not form.is_valid():
        # The pair again, saying in words what is missing (judge.js swaps a 400 that carries the pair).
        return _render_item(request, judge, current, problem=task_type.invalid_answer_message, status=400)
    if assign.answering_too_fast(judge):
        return HttpResponse(_("Too many answers in the last minute: take the time to read each pair."), status=429)
    answer = task_type.answer(form.cleaned_data)
    problem = task_type.answer_problem(answer, current)
    if problem is not None:
        return HttpResponseBadRequest(f"{problem}; nothing was stored.")
    try:
        judgment, _created = assign.record_judgment(current, answer, form.cleaned_data.get("response_ms"))
    except assign.PairGivenAway:
        return _given_away(request, judge)
    return _answered(request, judge, judgment)


def _given_away(request, judge):
    """The judge's reservation lapsed and others filled the pair: their answer is not stored; the next pair."""
    following = assign.next_assignment(judge)
    problem = _(
        "This pair was given to someone else while you were away, so your answer to it was not stored; "
        "here is your next one."
    )
    if following is None:
        done_url = reverse("annotation-show-thanks", args=[judge.campaign.slug, Judge.path_token])
        return HttpResponseClientRedirect(done_url) if request.htmx else redirect(done_url)
    return _render_item(request, judge, following, problem=problem)


def _answered(request, judge, judgment):
    """After an answer (or its repeat): a training pair's feedback, else the next pair or the end."""
    feedback = task_type_of(judge.campaign).feedback(judgment) if judgment.is_training else None
    if feedback is not None:
        return _feedback(request, judge, judgment.assignment, feedback)
    following = assign.next_assignment(judge)
    if following is None:
        done_url = reverse("annotation-show-thanks", args=[judge.campaign.slug, Judge.path_token])
        return HttpResponseClientRedirect(done_url) if request.htmx else redirect(done_url)
    if request.htmx:
        return render(request, "annotation/_item.html", _item_context(judge, following))
    return redirect("annotation-show-item", judge.campaign.slug, Judge.path_token)


def _posted_assignment(judge, value):
    """The judge's own assignment a form names (in ASCII digits), or None."""
    if not (value or "").isascii() or not (value or "").isdecimal():
        return None
    return judge.assignments.select_related("pair").filter(pk=int(value)).first()


def _feedback(request, judge, current, feedback):
    """After a training answer: the pair as it was shown, the task type's feedback, then a link on to the next pair."""
    task_type = task_type_of(judge.campaign)
    context = {"judge": judge, "campaign": judge.campaign, "task_type": task_type} | feedback
    context["sentences"] = _shown_sentences(current, task_type)
    if not request.htmx:
        context["examples"] = task_type.guideline_examples()
    return render(request, "annotation/_feedback.html" if request.htmx else "annotation/feedback.html", context)


@judge_view(Step.TRAINING, Step.PAIRS, methods=FORM, at_the_end=True)
def questionnaire(request, judge):
    questions = protocol_of(judge.campaign).questions
    if request.method == "POST":
        answers = {question: request.POST.get(f"q{i}", "").strip()[:2000] for i, question in enumerate(questions)}
        judge.questionnaire_answers = answers | {"submitted": True}
        judge.save(update_fields=["questionnaire_answers"])
        return redirect("annotation-show-thanks", judge.campaign.slug, Judge.path_token)
    numbered = [(f"q{i}", question) for i, question in enumerate(questions)]
    return render(request, "annotation/questionnaire.html", {"judge": judge, "questions": numbered})


@judge_view(Step.TRAINING, Step.PAIRS, at_the_end=True)
def thanks(request, judge):
    protocol = protocol_of(judge.campaign)
    if protocol.questions and not judge.questionnaire_answers.get("submitted"):
        return redirect("annotation-show-questionnaire", judge.campaign.slug, Judge.path_token)
    if judge.finished_at is None:
        judge.finished_at = timezone.now()
        judge.save(update_fields=["finished_at"])
    progress = assign.judge_progress(judge)
    context = {
        "judge": judge,
        "protocol": protocol,
        "progress": progress,
        "ran_out": progress["real_done"] < progress["real_planned"],
        # The code certifies real work: a judge who only did the training (say, on a
        # campaign closed since) does not get it.
        "show_code": progress["real_done"] > 0,
    }
    return render(request, "annotation/thanks.html", context)
