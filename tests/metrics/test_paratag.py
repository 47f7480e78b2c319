"""ParaTag's detector input (section 5.1) and matching scores (equations 4-7) on known values."""

import numpy as np
import pytest

from metrics.base import MetricUnavailable
from metrics.loading import embedded_minilm_path
from metrics.paratag import ParaTag, encode, matching_scores, next_version_name, resolve_detector


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(embedded_minilm_path()), local_files_only=True)


def test_each_word_is_read_at_its_first_subword_and_sep_is_never_read(tokenizer):
    first, second = ["Unbelievably", "cheap", "."], ["A", "bargain"]
    encoding, positions = encode(tokenizer, [(first, second)])
    tokens = tokenizer.convert_ids_to_tokens(encoding["input_ids"][0])
    first_positions, second_positions = positions[0]
    # [CLS] X1 [SEP] X2 [SEP]: the words' first subwords, in order, on both sides of the first [SEP].
    assert len(tokenizer.tokenize("Unbelievably")) > 1  # so "first subword" is tested
    assert [tokens[p] for p in first_positions] == [tokenizer.tokenize("Unbelievably")[0], "cheap", "."]
    assert [tokens[p] for p in second_positions] == ["a", "bargain"]
    read = set(first_positions) | set(second_positions)
    assert not {i for i, token in enumerate(tokens) if token in ("[SEP]", "[CLS]")} & read
    assert max(first_positions) < tokens.index("[SEP]") < min(second_positions)


def test_a_truncated_word_gets_no_position(tokenizer):
    _encoding, positions = encode(tokenizer, [(["word"] * 20, ["other"] * 20)], max_length=16)
    first, second = positions[0]
    assert -1 in first and -1 in second
    assert sum(p >= 0 for p in first + second) == 16 - 3  # [CLS] and two [SEP]


# G per word as rows (G[0] paraphrased, G[1] tagged); S = G[0] - G[1].
MATCHING = [
    # first (X1, hypothesis), second (X2, source), F, P, R, tagged share, tags first, tags second
    ([[2.0, 0.0], [0.0, 1.0]], [[1.0, 0.0]], (2 - 1 + 1) / 3, (2 - 1) / 2, 1.0, 1 / 3, [1], []),
    ([[0.0, 3.0]], [[0.0, 1.0], [0.5, 0.0]], (-3 - 1 + 0.5) / 3, -3.0, (-1 + 0.5) / 2, 2 / 3, [0], [0]),
    # an unread word (NaN) is left out of every mean and never tagged
    ([[1.0, 0.0], [np.nan, np.nan]], [[0.0, 0.0]], 0.5, 1.0, 0.0, 0.0, [], []),
]


@pytest.mark.parametrize(("first", "second", "f", "p", "r", "share", "tags_first", "tags_second"), MATCHING)
def test_matching_scores_follow_equations_4_to_7(first, second, f, p, r, share, tags_first, tags_second):
    result = matching_scores(np.array(first), np.array(second))
    assert (result["f"], result["p"], result["r"]) == pytest.approx((f, p, r))
    assert result["tagged_share"] == pytest.approx(share)
    assert (result["tags_first"], result["tags_second"]) == (tags_first, tags_second)


def test_without_a_detector_it_says_how_to_train_one(tmp_path):
    with pytest.raises(MetricUnavailable, match="train_span_detector"):
        resolve_detector(tmp_path)
    with pytest.raises(MetricUnavailable, match="detector 'v9' .PARATAG_DETECTOR"):
        resolve_detector(tmp_path, "v9")


def test_versions_are_numbered_after_the_highest(tmp_path):
    for name in ("0001-a", "0007-b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text("{}")
    (tmp_path / "0009-unfinished").mkdir()  # no manifest: a training that never finished
    assert next_version_name(tmp_path, "c") == "0008-c"
    assert resolve_detector(tmp_path).name == "0007-b"


def test_a_bad_score_variant_is_refused_naming_the_setting(tmp_path):
    with pytest.raises(ValueError, match="PARATAG_SCORE"):
        ParaTag(score="g", detectors_dir=tmp_path)
