"""PEM: the RBF support-vector regression of Liu et al. (2010, section 4.5) on its three features.

The features are pivot_f1 (adequacy), lm_fluency (fluency) and ngram_f1 (the target-language
F1, dissimilarity); the target is the human Overall score (1-5). A model is fitted on a criteria
campaign (`manage.py fit_pem`) and stored as plain JSON, never a pickle: the standardisation,
the support vectors, their dual coefficients, the intercept and gamma, so predicting is
sum_i a_i exp(-gamma |z - s_i|^2) + b with z the standardised features. A model lives in a
directory (`model.json` and `manifest.json`: training campaign, version, split, held-out
correlations, each feature's signature); PARASOL_PEM_MODEL names it. The `pem` metric
recomputes the three features and refuses a model whose feature signatures differ from them.
"""

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from metrics.base import Metric, MetricUnavailable, parse_signature, setting

FEATURES = ("pivot_f1", "lm_fluency", "ngram_f1")  # PEM 4.5: adequacy, fluency, dissimilarity
MODEL_SETTING = "PARASOL_PEM_MODEL"
MODEL_FILE, MANIFEST_FILE = "model.json", "manifest.json"


def fit_svr(features, targets) -> dict:
    """Standardise the features, fit scikit-learn's RBF SVR (C=1, epsilon=0.1, gamma='scale'); JSON-able params."""
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVR

    features = np.asarray(features, float)
    scaler = StandardScaler().fit(features)
    svr = SVR(kernel="rbf").fit(scaler.transform(features), np.asarray(targets, float))
    return {
        "mean": scaler.mean_.tolist(),
        "scale": scaler.scale_.tolist(),
        "gamma": float(svr._gamma),
        "support_vectors": svr.support_vectors_.tolist(),
        "dual_coef": svr.dual_coef_[0].tolist(),
        "intercept": float(svr.intercept_[0]),
    }


def predict_svr(params, features) -> np.ndarray:
    """The fitted regression at each row of `features` (the RBF kernel expansion, as scikit-learn's predict)."""
    z = (np.asarray(features, float) - np.asarray(params["mean"])) / np.asarray(params["scale"])
    # A fit on constant targets keeps no support vector (`[]` in JSON): the expansion is then empty and
    # the prediction the intercept alone, as scikit-learn's.
    vectors = np.asarray(params["support_vectors"], float).reshape(-1, z.shape[1])
    coefficients = np.asarray(params["dual_coef"], float).reshape(-1)
    distances = ((z[:, None, :] - vectors[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-params["gamma"] * distances) @ coefficients + params["intercept"]


def save_model(root, campaign, params, manifest, folder=None) -> Path:
    """Write `root/<folder>/v<N>/` (N one more than the last; `folder` defaults to `campaign`) with the model and
    its manifest; returns the directory. Parasol's `fit_pem` passes the campaign's pk (`campaign-<pk>`):
    a slug can be renamed or reused, so versions of two campaigns would share a folder.

    The files are written in a temporary directory renamed into place, so a reader never
    sees half a model; an existing version is never overwritten.
    """
    base = Path(root) / (folder or campaign)
    base.mkdir(parents=True, exist_ok=True)
    model_text = json.dumps(params, indent=1)
    sha256 = hashlib.sha256(model_text.encode()).hexdigest()
    taken = [int(p.name[1:]) for p in base.glob("v*") if p.name[1:].isdigit()]
    version = max(taken, default=0) + 1
    while True:
        staging = base / f".v{version}-{os.getpid()}"
        staging.mkdir()
        written = {**manifest, "campaign": campaign, "version": f"v{version}", "model_sha256": sha256}
        (staging / MODEL_FILE).write_text(model_text, encoding="utf-8")
        (staging / MANIFEST_FILE).write_text(json.dumps(written, indent=1), encoding="utf-8")
        target = base / f"v{version}"
        try:
            staging.rename(target)  # fails when another fit took this version meanwhile: take the next
            return target
        except OSError:
            for path in staging.iterdir():
                path.unlink()
            staging.rmdir()
            version += 1


def load_model(directory) -> tuple[dict, dict]:
    """(params, manifest) of a saved model; MetricUnavailable naming the problem otherwise."""
    directory = Path(directory)
    try:
        model_text = (directory / MODEL_FILE).read_text(encoding="utf-8")
        manifest = json.loads((directory / MANIFEST_FILE).read_text(encoding="utf-8"))
        params = json.loads(model_text)
    except (OSError, ValueError) as error:
        raise MetricUnavailable(
            f"{MODEL_SETTING} names {directory}, which holds no readable PEM model: {error}"
        ) from None
    if hashlib.sha256(model_text.encode()).hexdigest() != manifest.get("model_sha256"):
        raise MetricUnavailable(f"{directory}/{MODEL_FILE} does not match its manifest's sha256")
    return params, manifest


def feature_options(signature_line) -> dict:
    """The constructor options that reproduce a feature's signature (the settings it names)."""
    fields = parse_signature(signature_line)
    options = {}
    if fields.get("metric") == "lm_fluency":
        options = {"model": fields.get("model"), "norm": fields.get("norm"), "dtype": fields.get("dtype")}
    elif fields.get("metric") == "ngram_f1":
        options = {"stem": "none" if fields.get("stem") == "none" else "porter"}
    elif fields.get("metric") == "pivot_f1":
        options = {
            "english_side": fields.get("english"),
            "stem": "none" if fields.get("stem") == "none+lc" else "porter",
        }
        options["min_edge"] = float(fields.get("edge", ">0.1").lstrip(">"))
        options["min_ngram"] = float(fields.get("ngram", ">0.01").lstrip(">"))
    return {key: value for key, value in options.items() if value is not None}


class Pem(Metric):
    name = "pem"

    def __init__(self, *, model=None, phrase_table=None):
        from metrics.registry import get_metric

        directory = setting(MODEL_SETTING, None, value=model)
        if not directory:
            raise MetricUnavailable(
                f"pem needs a fitted model: run `manage.py fit_pem <campaign rated as PEM>` and set {MODEL_SETTING} "
                "to the directory it prints"
            )
        # One model for the whole deployment, named by the operator (PARASOL_PEM_MODEL): fitting another
        # never changes it, so no researcher's fit changes another campaign's scores; the signature names it.
        self.params, self.manifest = load_model(directory)
        self.features = {}
        for feature in FEATURES:
            wanted = self.manifest["features"][feature]
            options = feature_options(wanted)
            if feature == "pivot_f1" and phrase_table:
                options["phrase_table"] = phrase_table
            scorer = get_metric(feature, **options)
            if scorer.signature_string() != wanted:
                raise MetricUnavailable(
                    f"the PEM model {self.manifest['campaign']} {self.manifest['version']} was fitted on {feature} "
                    f"{wanted}; here {feature} gives {scorer.signature_string()}: set the same table, model and options"
                )
            self.features[feature] = scorer

    def _score_batch(self, sources, hypotheses):
        columns = [self.features[f].score(sources=sources, hypotheses=hypotheses) for f in FEATURES]
        return predict_svr(self.params, np.column_stack(columns)).tolist()

    def _signature_fields(self):
        return {
            "trained_on": self.manifest["campaign"],
            "model_version": self.manifest["version"],
            "model": f"sha256-{self.manifest['model_sha256'][:16]}",
            "split": self.manifest.get("split", ""),
        }
