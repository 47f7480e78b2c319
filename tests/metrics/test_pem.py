"""pem: the JSON SVR equals scikit-learn's, models are versioned and checked, the metric refuses foreign features."""

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

from metrics.base import MetricUnavailable
from metrics.ngram_f1 import NgramF1
from metrics.pem import FEATURES, Pem, feature_options, fit_svr, load_model, predict_svr, save_model
from metrics.pivot_f1 import PivotF1

TABLE = Path(__file__).resolve().parents[2] / "fixtures" / "pem_phrase_table.txt"


def training_data(n=60, seed=3):
    rng = np.random.default_rng(seed)
    features = np.column_stack([rng.uniform(0, 1, n), rng.normal(-4, 1, n), rng.uniform(0, 1, n)])
    overall = 1 + 3 * features[:, 0] + 0.3 * features[:, 1] - features[:, 2] ** 2 + rng.normal(0, 0.2, n)
    return features, overall


def test_the_json_model_predicts_what_scikit_learn_predicts():
    features, overall = training_data()
    scaler = StandardScaler().fit(features)
    reference = SVR(kernel="rbf").fit(scaler.transform(features), overall)
    params = fit_svr(features, overall)
    probe = training_data(n=15, seed=9)[0]
    expected = reference.predict(scaler.transform(probe))
    assert predict_svr(params, probe) == pytest.approx(expected, abs=1e-9)
    json.dumps(params)  # plain JSON, no pickle


def test_a_fit_on_constant_ratings_predicts_their_value():
    """Every judge gave the same Overall: the RBF SVR keeps no support vector, and the model still predicts
    (the intercept, as scikit-learn does), through a JSON round trip."""
    rng = np.random.default_rng(3)
    features, ratings = rng.normal(size=(12, 3)), np.full(12, 4.0)
    params = json.loads(json.dumps(fit_svr(features, ratings)))
    assert params["support_vectors"] == []
    sklearn = SVR(kernel="rbf").fit(StandardScaler().fit_transform(features), ratings)
    predicted = predict_svr(params, rng.normal(size=(5, 3)))
    assert predicted.shape == (5,)
    assert np.allclose(predicted, sklearn.intercept_[0])
    assert np.allclose(predicted, 4.0, atol=0.11)  # within the SVR's epsilon of the ratings


def test_models_are_versioned_and_checked_against_their_manifest(tmp_path):
    params = fit_svr(*training_data())
    first = save_model(tmp_path, "pem-study", params, {"features": {}, "split": "sources"})
    second = save_model(tmp_path, "pem-study", params, {"features": {}, "split": "paper"})
    assert (first.name, second.name) == ("v1", "v2")
    loaded, manifest = load_model(second)
    assert loaded == params and manifest["campaign"] == "pem-study" and manifest["version"] == "v2"
    (first / "model.json").write_text(json.dumps({**params, "intercept": 9.0}))
    with pytest.raises(MetricUnavailable, match="does not match its manifest"):
        load_model(first)
    with pytest.raises(MetricUnavailable, match="no readable PEM model"):
        load_model(tmp_path / "nothing")


def test_without_a_model_pem_says_it_is_unavailable(monkeypatch):
    monkeypatch.delenv("PARASOL_PEM_MODEL", raising=False)
    with pytest.raises(MetricUnavailable, match="fit_pem"):
        Pem()


def test_feature_options_rebuild_each_features_signature():
    for scorer in (NgramF1(), NgramF1(stem="none"), PivotF1(phrase_table=str(TABLE), min_edge=0)):
        options = feature_options(scorer.signature_string())
        rebuilt = type(scorer)(**options, **({"phrase_table": str(TABLE)} if isinstance(scorer, PivotF1) else {}))
        assert rebuilt.signature_string() == scorer.signature_string()


def test_a_model_fitted_on_other_features_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("PARASOL_PEM_PHRASE_TABLE", str(TABLE))
    signatures = {
        "pivot_f1": PivotF1().signature_string(),
        "lm_fluency": "metric:lm_fluency|version:1|model:embedded|norm:word",  # the old, unstemmed-era signature
        "ngram_f1": NgramF1().signature_string(),
    }
    directory = save_model(tmp_path, "study", fit_svr(*training_data()), {"features": signatures})
    with pytest.raises(MetricUnavailable, match="was fitted on lm_fluency"):
        Pem(model=str(directory))
    assert set(signatures) == set(FEATURES)


def test_pem_scores_a_pair_with_the_stored_svr_over_its_three_features(tmp_path, monkeypatch):
    from metrics.lm_fluency import LmFluency

    monkeypatch.setenv("PARASOL_PEM_PHRASE_TABLE", str(TABLE))
    scorers = {"pivot_f1": PivotF1(), "lm_fluency": LmFluency(device="cpu"), "ngram_f1": NgramF1()}
    signatures = {name: scorer.signature_string() for name, scorer in scorers.items()}
    params = fit_svr(*training_data())
    directory = save_model(tmp_path, "study", params, {"features": signatures, "split": "sources"})
    metric = Pem(model=str(directory))
    sources, hypotheses = ["Morning , sir .", "he runs fast"], ["Hello , Querrien .", "he run fast"]
    features = np.column_stack([scorers[f].score(sources=sources, hypotheses=hypotheses) for f in FEATURES])
    assert metric.score(sources=sources, hypotheses=hypotheses) == pytest.approx(predict_svr(params, features).tolist())
    signature = metric.signature()
    assert (signature["trained_on"], signature["model_version"], signature["split"]) == ("study", "v1", "sources")


def test_an_existing_version_is_never_overwritten(tmp_path):
    params = fit_svr(*training_data())
    (tmp_path / "study" / "v1").mkdir(parents=True)
    (tmp_path / "study" / "v1" / "model.json").write_text("{}")  # another fit's, not overwritten
    assert save_model(tmp_path, "study", params, {"features": {}}).name == "v2"
    assert (tmp_path / "study" / "v1" / "model.json").read_text() == "{}"
    assert not list((tmp_path / "study").glob(".v*"))
