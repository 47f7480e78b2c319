"""With DEBUG off a judge never sees a traceback, and a locked SQLite database is ridden out."""

import logging

import pytest
from django.db import OperationalError
from django.test import Client
from django.urls import reverse

from annotation import assignment as assign
from parasol import db
from tests.factories import add_pairs, make_judge, remember

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def judge(campaign, settings):
    settings.DEBUG = False
    add_pairs(campaign, 3)
    return make_judge(campaign)


def judge_client(judge, **headers):
    """A browser that holds the judge's own cookie (a link alone asks before adopting a judge)."""
    client = Client(raise_request_exception=False, **headers)
    remember(client, judge)
    return client


def item_url(judge):
    return reverse("annotation-show-item", args=[judge.campaign.slug, judge.token])


def fail_with(error, times=None):
    """A stand-in for next_assignment that fails `times` times (always when None), then works."""
    real = assign.next_assignment
    calls = []

    def failing(judge):
        calls.append(1)
        if times is None or len(calls) <= times:
            raise error
        return real(judge)

    return failing, calls


@pytest.mark.parametrize(
    "language, title",
    [("en", "Something went wrong"), ("fr", "Un problème est survenu")],
)
def test_an_error_shows_a_plain_page_in_the_judges_language_and_is_logged(judge, monkeypatch, caplog, language, title):
    failing, _ = fail_with(RuntimeError("secret internals"))
    monkeypatch.setattr(assign, "next_assignment", failing)
    client = judge_client(judge, HTTP_ACCEPT_LANGUAGE=language)
    with caplog.at_level(logging.ERROR, logger="django.request"):
        response = client.get(item_url(judge))
    page = response.content.decode()
    assert response.status_code == 500
    assert title in page
    assert "Traceback" not in page and "secret internals" not in page and "RuntimeError" not in page
    assert any(record.exc_info and "secret internals" in str(record.exc_info[1]) for record in caplog.records)


def test_a_locked_database_is_retried_and_the_judge_never_sees_it(judge, monkeypatch):
    failing, calls = fail_with(OperationalError("database is locked"), times=2)
    monkeypatch.setattr(assign, "next_assignment", failing)
    response = judge_client(judge).get(item_url(judge))
    assert response.status_code == 200 and "Training" in response.content.decode()
    assert len(calls) == 3


def test_the_retries_are_bounded(judge, monkeypatch):
    failing, calls = fail_with(OperationalError("database is locked"))
    monkeypatch.setattr(assign, "next_assignment", failing)
    monkeypatch.setattr(db.time, "sleep", lambda seconds: None)
    response = judge_client(judge).get(item_url(judge))
    assert response.status_code == 500 and "Something went wrong" in response.content.decode()
    assert len(calls) == db.LOCKED_ATTEMPTS


def test_other_database_errors_are_not_retried(judge, monkeypatch):
    failing, calls = fail_with(OperationalError("no such table: nowhere"))
    monkeypatch.setattr(assign, "next_assignment", failing)
    response = judge_client(judge).get(item_url(judge))
    assert response.status_code == 500 and len(calls) == 1
