"""End to end with the embedded model, judges in Chromium: 3 candidates for each of 10 sources, FS-Direct scores,
the top one selected, 20% of the others drawn, judges walking the protocol in a real browser and handed exactly
those, and the report's selected-against-unselected table with an interval for each group and their difference."""

import re
import zlib

import pytest
from playwright.sync_api import expect

from annotation import assignment as assign
from annotation.models import Judgment
from generation.models import GenerationRun, create_run
from generation.selection import select_candidates
from reports.analysis.ppi import SELECTED, SELECTION_DIFFERENCE, UNSELECTED
from reports.cache import compute_report
from scoring.service import score_inline
from tests.factories import without_controls
from tests.system.test_browser_report import log_in

# Sequences reset: the candidates' keys, and so the seeded draw of the unselected ones, are the same every run.
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, reset_sequences=True)]

SOURCES = [
    "The cat sleeps on the sofa.",
    "It is raining today.",
    "She reads a good book.",
    "The train left early.",
    "We ate dinner at home.",
    "The shop opens at nine.",
    "He plays the guitar well.",
    "The sky is very blue.",
    "My brother likes football.",
    "The meeting was cancelled.",
]


def judges_answer(sentences):
    """A judge's verdict, blind to the selection: fixed by the two sentences, so both judges agree."""
    return "Same meaning" if zlib.crc32("|".join(sorted(sentences)).encode()) % 3 else "Very different"


def walk_the_protocol(browser, url, level):
    """One judge in their own browser: consent, English level, guidelines, training, then every pair handed
    out, until the thanks page; returns how many real pairs they answered."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.get_by_label("I agree").check()
    page.get_by_role("button", name="Start").click()
    page.get_by_label(level).check()
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Start the training").click()
    for step in range(1, 6):
        expect(page.locator(".progress")).to_contain_text(f"Training {step} / 5")
        page.locator("#item button.answer", has_text="Mostly similar").click()
        page.get_by_role("link", name="Continue").click()
    thanks = page.get_by_role("heading", name="Thank you!")
    answered = 0
    while True:
        count = page.locator("#item .progress .count")
        expect(count.or_(thanks)).to_be_visible()
        if thanks.is_visible():
            break
        expect(count).to_have_text(re.compile(rf"^{answered + 1} / "))
        verdict = judges_answer(page.locator("#item .sentence").all_inner_texts())
        page.locator("#item button.answer", has_text=verdict).click()
        answered += 1
        expect(page.locator("#item .progress .count", has_text=re.compile(rf"^{answered} / "))).to_have_count(0)
    context.close()
    return answered


def test_k_candidates_selected_by_fs_direct_then_judged_in_the_browser_and_reported(
    live_server, browser, page, researcher
):
    from campaigns.models import Campaign

    campaign = without_controls(
        Campaign.objects.create(slug="selection", name="Selection", created_by=researcher, pairs_per_judge=100)
    )
    run = create_run(
        campaign, sources=SOURCES, templates=["naive"], decoding="sampling", candidates=3, max_new_tokens=24, seed=1
    )
    assert (run.selection, run.selection_metric, run.unselected_share) == ("top", "parapluie_fs_direct", 0.2)
    run.run_inline()
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.DONE and run.outputs.count() == 30
    candidates = list(campaign.real_pairs.values_list("pk", flat=True))
    assert candidates and not assign.open_pairs(campaign).exists()  # held back until selected
    assert "no parapluie_fs_direct scores yet" in select_candidates(run)
    score_inline(candidates, ["parapluie_fs_direct"])
    assert select_candidates(run) == ""
    outputs = list(run.outputs.filter(pair__isnull=False).select_related("pair"))
    groups = {output.source_id for output in outputs}
    assert sum(output.selected for output in outputs) == len(groups)  # one per source with a candidate
    for output in outputs:
        best = max(o.selection_score for o in outputs if o.source_id == output.source_id)
        assert output.selected == (output.rank == 1) and (output.rank == 1) == (output.selection_score == best)
    sent = {output.pair_id for output in outputs if output.pair.chosen}
    selected = {output.pair_id for output in outputs if output.selected}
    assert selected < sent, "the seeded draw sends at least one unselected candidate (sequences are reset)"

    url = f"{live_server.url}/j/{campaign.slug}/"
    answered = [walk_the_protocol(browser, url, level) for level in ("Advanced", "Native")]
    judged = list(Judgment.objects.filter(pair__campaign=campaign, is_training=False).values_list("pair", flat=True))
    assert answered == [len(sent), len(sent)] and sorted(judged) == sorted(2 * list(sent))  # exactly the drawn ones

    report, _frames = compute_report([campaign], "human")
    table = report.tables["selection"].set_index("candidates")
    assert table.loc[SELECTED, "n_pairs"] == len(groups) and table.loc[SELECTED, "n_labelled"] == len(selected)
    assert table.loc[UNSELECTED, "n_pairs"] == len(outputs) - len(groups)
    assert table.loc[UNSELECTED, "n_labelled"] == len(sent) - len(selected)
    for kind in (SELECTED, UNSELECTED, SELECTION_DIFFERENCE):  # each group its interval, and the difference
        row = table.loc[kind]
        assert row["human_low"] <= row["human"] <= row["human_high"], (kind, row)
        assert row["human_low"] < row["human_high"], (kind, row)
    assert table.loc[UNSELECTED, "interval"] == "Wilson"  # a handful of judged candidates
    assert table.loc[SELECTION_DIFFERENCE, "interval"] in ("normal", "Newcombe")

    log_in(page, live_server, researcher)  # the researcher reads the same table on the report page
    page.goto(f"{live_server.url}/campaigns/{campaign.slug}/report/?label=human")
    shown = page.locator("table", has=page.get_by_role("columnheader", name="Judges only [95% CI]"))
    for kind in (SELECTED, UNSELECTED, SELECTION_DIFFERENCE):
        expect(shown.get_by_role("row").filter(has_text=kind).first).to_contain_text(re.compile(r"\[[-−0-9.]+, "))
