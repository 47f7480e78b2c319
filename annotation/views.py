"""The judge protocol: welcome, English level, guidelines, training, pairs, thanks.

Judges are anonymous: a random token in the URL and in a cookie identifies
them, so the same link resumes where they stopped.
"""

from django.conf import settings
from django.http import Http404, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from campaigns.models import Campaign

from . import assignment as assign
from . import joining
from .controls import protocol_of
from .diff import word_diff
from .forms import EnglishLevelForm
from .guidelines import guideline_examples
from .models import Judge
from .tasktypes.registry import task_type_of


def _cookie_name(campaign):
    return f"parasol_judge_{campaign.pk}"


def _remember_judge(response, judge):
    response.set_cookie(
        _cookie_name(judge.campaign),
        judge.token,
        max_age=settings.JUDGE_COOKIE_AGE_DAYS * 86400,
        httponly=True,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,
    )
    return response


def _get_judge(slug, token):
    """A judge reaches only their own campaign and assignments; anything else is a 404."""
    judge = Judge.objects.select_related("campaign").filter(token=token, campaign__slug=slug).first()
    if judge is None:
        raise Http404("No such judge in this campaign.")
    return judge


def _step_url(judge):
    """Where the judge should be now, given what they have done."""
    if not judge.english_level:
        return redirect("annotation-english-level", judge.campaign.slug, judge.token)
    if judge.guidelines_read_at is None:
        return redirect("annotation-guidelines", judge.campaign.slug, judge.token)
    return None


def welcome(request, slug):
    campaign = get_object_or_404(Campaign, slug=slug)
    crowd = joining.crowd_ids(request.POST if request.method == "POST" else request.GET)
    judge = joining.returning_judge(campaign, request.COOKIES.get(_cookie_name(campaign)), crowd)
    if judge is not None:
        return _remember_judge(redirect("annotation-show-item", slug, judge.token), judge)
    reason = joining.why_unavailable(campaign)
    if reason is not None:
        return render(request, "annotation/unavailable.html", {"campaign": campaign, "reason": reason})
    context = {"campaign": campaign, "crowd": crowd, "protocol": protocol_of(campaign)}
    if request.method == "POST":
        if request.POST.get("consent") != "yes":
            return render(request, "annotation/welcome.html", context | {"consent_missing": True})
        key = joining.join_key(request)
        if joining.joins_exceeded(campaign, key):
            return render(request, "annotation/unavailable.html", {"campaign": campaign, "reason": "busy"}, status=429)
        judge = joining.join(campaign, key=key, crowd=crowd)
        return _remember_judge(redirect("annotation-english-level", slug, judge.token), judge)
    return render(request, "annotation/welcome.html", context)


def english_level(request, slug, token):
    judge = _get_judge(slug, token)
    form = EnglishLevelForm(request.POST if request.method == "POST" else None, instance=judge)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("annotation-guidelines", slug, token)
    return _remember_judge(render(request, "annotation/english_level.html", {"judge": judge, "form": form}), judge)


def guidelines(request, slug, token):
    judge = _get_judge(slug, token)
    if request.method == "POST":
        if judge.guidelines_read_at is None:
            judge.guidelines_read_at = timezone.now()
            judge.save(update_fields=["guidelines_read_at"])
        return redirect("annotation-show-item", slug, token)
    context = {"judge": judge, "examples": guideline_examples(), "task_type": task_type_of(judge.campaign)}
    return render(request, "annotation/guidelines.html", context)


def _item_context(judge, current):
    assign.mark_shown(current)
    top, bottom = word_diff(current.top_sentence, current.bottom_sentence)
    task_type = task_type_of(judge.campaign)
    return {
        "judge": judge,
        "campaign": judge.campaign,
        "assignment": current,
        "top_segments": top,
        "bottom_segments": bottom,
        "task_type": task_type,
        "progress": assign.judge_progress(judge),
    } | task_type.judge_context(current)


def _closed(request, judge):
    return render(request, "annotation/unavailable.html", {"campaign": judge.campaign, "reason": "closed"})


def show_item(request, slug, token):
    judge = _get_judge(slug, token)
    if not judge.campaign.is_open:
        return _closed(request, judge)
    step = _step_url(judge)
    if step is not None:
        return step
    current = assign.next_assignment(judge)
    if current is None:
        return redirect("annotation-thanks", slug, token)
    context = _item_context(judge, current) | {"examples": guideline_examples()}
    response = render(request, "annotation/item.html", context)
    return _remember_judge(response, judge)


@require_POST
def answer(request, slug, token):
    judge = _get_judge(slug, token)
    if not judge.campaign.is_open:
        return _closed(request, judge)
    task_type = task_type_of(judge.campaign)
    form = task_type.answer_form(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest(str(task_type.invalid_answer_message))
    current = judge.assignments.select_related("pair").filter(pk=form.cleaned_data["assignment"]).first()
    if current is None:
        return HttpResponseBadRequest("This pair is not assigned to you; nothing was stored.")
    answer = task_type.answer(form.cleaned_data)
    problem = task_type.answer_problem(answer, current)
    if problem is not None:
        return HttpResponseBadRequest(f"{problem}; nothing was stored.")
    judgment, _ = assign.record_judgment(current, answer, form.cleaned_data.get("response_ms"))
    feedback = task_type.feedback(judgment) if current.is_training else None
    if feedback is not None:
        return _feedback(request, judge, feedback)
    following = assign.next_assignment(judge)
    if following is None:
        done_url = redirect("annotation-thanks", slug, token).url
        return HttpResponseClientRedirect(done_url) if request.htmx else redirect(done_url)
    if request.htmx:
        return render(request, "annotation/_item.html", _item_context(judge, following))
    return redirect("annotation-show-item", slug, token)


def _feedback(request, judge, feedback):
    """After a training answer: the task type's feedback, then a link on to the next pair."""
    context = {"judge": judge, "campaign": judge.campaign} | feedback
    return render(request, "annotation/_feedback.html" if request.htmx else "annotation/feedback.html", context)


def questionnaire(request, slug, token):
    judge = _get_judge(slug, token)
    questions = protocol_of(judge.campaign).questions
    if request.method == "POST":
        answers = {question: request.POST.get(f"q{i}", "").strip()[:2000] for i, question in enumerate(questions)}
        judge.questionnaire_answers = answers | {"submitted": True}
        judge.save(update_fields=["questionnaire_answers"])
        return redirect("annotation-thanks", slug, token)
    numbered = [(f"q{i}", question) for i, question in enumerate(questions)]
    return render(request, "annotation/questionnaire.html", {"judge": judge, "questions": numbered})


def thanks(request, slug, token):
    judge = _get_judge(slug, token)
    if _step_url(judge) is not None or assign.next_assignment(judge) is not None:
        return redirect("annotation-show-item", slug, token)
    protocol = protocol_of(judge.campaign)
    if protocol.questions and not judge.questionnaire_answers.get("submitted"):
        return redirect("annotation-questionnaire", slug, token)
    if judge.finished_at is None:
        judge.finished_at = timezone.now()
        judge.save(update_fields=["finished_at"])
    progress = assign.judge_progress(judge)
    context = {
        "judge": judge,
        "protocol": protocol,
        "progress": progress,
        "ran_out": progress["real_done"] < progress["real_total"],
    }
    return render(request, "annotation/thanks.html", context)
