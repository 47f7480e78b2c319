"""Distinct metadata keys are capped per campaign (PARASOL_METADATA_MAX_KEYS), in every import path (issue 25).

A few keys per row but different ones in each row widen every export as much as one wide row:
the cap counts the campaign's keys, old and new, and a refused import stores nothing.
"""

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from campaigns.importers import CorpusImportError, import_pairs, import_rows
from tests.factories import add_pairs

CAP = 6


@pytest.fixture(autouse=True)
def small_cap(settings):
    settings.PARASOL_METADATA_MAX_KEYS = CAP


def spread_rows(n_rows, keys_per_row=2, prefix="k"):
    """Rows with few keys each, but different keys in every row (the review's attack)."""
    return [
        {
            "source": f"Source {i}.",
            "hypothesis": f"Hypothesis {i}.",
            "metadata": {f"{prefix}{i}_{j}": j for j in range(keys_per_row)},
        }
        for i in range(n_rows)
    ]


def jsonl(rows):
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def test_it_imports_up_to_the_cap(campaign):
    import_rows(campaign, spread_rows(CAP // 2))
    assert campaign.metadata_keys_stored() == {f"k{i}_{j}" for i in range(CAP // 2) for j in range(2)}


def test_the_api_refuses_keys_spread_over_rows_and_stores_nothing(client, campaign, researcher):
    client.force_login(researcher)
    url = f"/api/campaigns/{campaign.slug}/pairs/"
    response = client.post(url, spread_rows(CAP), content_type="application/json")
    assert response.status_code == 409  # each row is well formed: together they conflict with the campaign's cap
    detail = response.json()["detail"]
    assert "PARASOL_METADATA_MAX_KEYS" in detail and f"limit of {CAP}" in detail and "row 4" in detail
    assert campaign.pairs.count() == 0


def test_the_web_upload_refuses_them_and_stores_nothing(client, campaign, researcher):
    client.force_login(researcher)
    upload = SimpleUploadedFile("wide.jsonl", jsonl(spread_rows(CAP)))
    response = client.post(
        reverse("annotation-upload-corpus", args=[campaign.slug]), {"file": upload, "format": "auto"}
    )
    assert response.status_code == 200
    assert "PARASOL_METADATA_MAX_KEYS" in response.content.decode()
    assert campaign.pairs.count() == 0


def test_the_upload_of_control_items_refuses_them_too(client, campaign, researcher):
    add_pairs(campaign, 3)
    client.force_login(researcher)
    rows = [row | {"label": 1} for row in spread_rows(CAP)]
    upload = SimpleUploadedFile("controls.jsonl", jsonl(rows))
    form = {"file": upload, "format": "auto", "controls": "on"}
    response = client.post(reverse("annotation-upload-corpus", args=[campaign.slug]), form)
    assert "PARASOL_METADATA_MAX_KEYS" in response.content.decode()
    assert campaign.control_pairs.count() == 0


def test_the_command_refuses_them_and_exits_non_zero(campaign, tmp_path):
    path = tmp_path / "wide.jsonl"
    path.write_bytes(jsonl(spread_rows(CAP)))
    with pytest.raises(CommandError, match="PARASOL_METADATA_MAX_KEYS"):
        call_command("import_pairs", campaign.slug, str(path), stdout=io.StringIO(), stderr=io.StringIO())
    assert campaign.pairs.count() == 0


def test_the_streamed_import_refuses_a_key_past_the_cap_in_a_later_chunk(campaign, monkeypatch):
    from campaigns.importers import readers

    monkeypatch.setattr(readers, "IMPORT_CHUNK_ROWS", 2)  # the refused row comes after chunks were inserted
    with pytest.raises(CorpusImportError, match="PARASOL_METADATA_MAX_KEYS"):
        import_pairs(campaign, io.BytesIO(jsonl(spread_rows(CAP))), format="jsonl")
    assert campaign.pairs.count() == 0


def test_keys_already_stored_count_against_the_cap(campaign):
    import_rows(campaign, spread_rows(2, prefix="old"))  # 4 keys
    with pytest.raises(CorpusImportError, match=f"give campaign 'demo' {CAP + 1} distinct"):
        import_rows(campaign, spread_rows(2, keys_per_row=3, prefix="new")[:1] + spread_rows(1, prefix="x"))
    assert campaign.pairs.count() == 2
    # Reusing the stored keys adds no column: any number of such rows is fine.
    reused = [{"source": f"S {i}.", "hypothesis": f"H {i}.", "metadata": {"old0_0": i, "old1_1": i}} for i in range(9)]
    assert import_rows(campaign, reused).count == 9


def test_generation_outputs_go_through_the_same_check(campaign):
    """A generation run stores its outputs with `import_rows` (generation.models): the cap applies to it."""
    import_rows(campaign, spread_rows(3))  # the cap is reached
    provenance = {"generator": "HuggingFaceTB/SmolLM2-135M-Instruct", "template": "naive"}
    with pytest.raises(CorpusImportError, match="PARASOL_METADATA_MAX_KEYS"):
        import_rows(campaign, [{"source": "A.", "hypothesis": "B.", "metadata": provenance}], corpus="LLM")


def test_a_generation_run_past_the_cap_fails_saying_so(campaign, monkeypatch):
    from generation import llm
    from generation.models import GenerationRun, create_run
    from generation.tasks import generate_batch
    from tests.generation.test_generation_run import FakeGenerator

    monkeypatch.setattr(llm, "get_generator", lambda model: FakeGenerator())
    import_rows(campaign, spread_rows(3))  # the cap is reached: the outputs' provenance keys are new
    run = create_run(campaign, sources=["The cat sleeps on the sofa."], templates=["naive"], max_new_tokens=16)
    generate_batch(run.pk, list(run.sources.values_list("pk", flat=True)))
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.FAILED and "PARASOL_METADATA_MAX_KEYS" in run.error
    assert campaign.real_pairs.count() == 3
