"""The upload page: corpora, a training trial and hidden control items, all or nothing."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.controls import ensure_control_pairs, protocol_of
from tests.factories import add_pairs, make_judge


@pytest.fixture
def controlled(campaign):
    """A campaign whose judges get hidden control items."""
    add_pairs(campaign, 30)
    protocol = protocol_of(campaign)
    protocol.control_share = 0.25
    protocol.save()
    return campaign


def test_it_uploads_a_corpus(client, campaign, researcher):
    client.force_login(researcher)
    upload = SimpleUploadedFile("pairs.csv", b"source,hypothesis,label\nA.,B.,1\nC.,D.,no\n")
    response = client.post(reverse("annotation-upload-corpus", args=["demo"]), {"file": upload, "format": "auto"})
    assert response.status_code == 302
    assert campaign.real_pairs.count() == 2


def test_a_bad_upload_names_the_problem_and_imports_nothing(client, campaign, researcher):
    client.force_login(researcher)
    upload = SimpleUploadedFile("pairs.csv", b"source,hypothesis\nA.,B.\nC.,\n")
    response = client.post(reverse("annotation-upload-corpus", args=["demo"]), {"file": upload, "format": "auto"})
    assert response.status_code == 200
    assert "line 3" in response.content.decode().lower()
    assert campaign.pairs.count() == 0


def test_it_replaces_the_training_trial_from_an_upload(client, campaign, researcher):
    client.force_login(researcher)
    rows = "".join(f"Training source {i}.,Training hypothesis {i}.\n" for i in range(5))
    upload = SimpleUploadedFile("training.csv", ("source,hypothesis\n" + rows).encode())
    client.post(
        reverse("annotation-upload-corpus", args=["demo"]), {"file": upload, "format": "auto", "training": "on"}
    )
    assert list(campaign.training_pairs.values_list("source", flat=True)) == [f"Training source {i}." for i in range(5)]
    assert campaign.real_pairs.count() == 0


def test_it_refuses_to_change_a_training_trial_judges_started(client, campaign, researcher):
    from annotation.assignment import next_assignment

    next_assignment(make_judge(campaign))
    client.force_login(researcher)
    rows = "".join(f"S {i}.,H {i}.\n" for i in range(5))
    upload = SimpleUploadedFile("training.csv", ("source,hypothesis\n" + rows).encode())
    response = client.post(
        reverse("annotation-upload-corpus", args=["demo"]), {"file": upload, "format": "auto", "training": "on"}
    )
    assert "can no longer change" in response.content.decode()


def test_a_researcher_uploads_control_items_with_their_expected_answers(client, researcher, controlled):
    client.force_login(researcher)
    url = reverse("annotation-upload-corpus", args=[controlled.slug])
    body = (
        b"source,hypothesis,label\nThe sky is blue.,The sky is blue.,1\nThe sky is blue.,Cheese is made from milk.,0\n"
    )
    client.post(url, {"file": SimpleUploadedFile("controls.csv", body), "format": "auto", "controls": "on"})
    controls = list(controlled.control_pairs.order_by("pk"))
    assert [(c.hypothesis, c.gold_label) for c in controls] == [
        ("The sky is blue.", 1),
        ("Cheese is made from milk.", 0),
    ]
    assert controlled.real_pairs.count() == 30
    assert ensure_control_pairs(controlled) == 0  # uploaded controls replace the built ones


def test_control_items_without_an_expected_answer_are_refused_whole(client, researcher, controlled):
    client.force_login(researcher)
    url = reverse("annotation-upload-corpus", args=[controlled.slug])
    body = b"source,hypothesis,label\nA.,A.,1\nB.,C.,\n"
    response = client.post(url, {"file": SimpleUploadedFile("c.csv", body), "format": "auto", "controls": "on"})
    assert "need a label" in response.content.decode() and "line 3" in response.content.decode()
    assert not controlled.control_pairs.exists()
