"""A real client of the array API standard: scikit-learn with
array_api_dispatch=True fits estimators on gpuarr arrays, and the fitted
models agree with the same estimators fitted on NumPy arrays (issue 24).

scikit-learn's array API support needs SciPy's (SCIPY_ARRAY_API=1 before
SciPy is first imported), which this test process has long imported, so
each case runs in a fresh interpreter.  Skipped where scikit-learn or
array-api-compat is not installed."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import gpuarr as gp

pytest.importorskip("sklearn")
pytest.importorskip("array_api_compat")

pytestmark = pytest.mark.gpu

SCRIPT = """
import json
import sys

import numpy as np
import sklearn

import gpuarr as gp

rng = np.random.default_rng(int(sys.argv[2]))
n, d = 300, 8
X = rng.standard_normal((n, d)) @ rng.standard_normal((d, d)) + rng.standard_normal(d)
y_class = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.standard_normal(n) > 0).astype(np.int64)
y_class[X[:, 2] > 1.0] = 2
y_reg = X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n)


def host(v):
    return v.get() if isinstance(v, gp.ndarray) else np.asarray(v)


def fit(make, X, y, attrs):
    est = make().fit(X, y) if y is not None else make().fit(X)
    return {a: host(getattr(est, a)) for a in attrs}, est


case = sys.argv[1]
if case == "pca":
    from sklearn.decomposition import PCA
    make, y, ydev = (lambda: PCA(n_components=4, svd_solver="full")), None, None
    attrs = ["components_", "explained_variance_", "singular_values_", "mean_"]
elif case == "lda":
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    make, y, ydev = LinearDiscriminantAnalysis, y_class, gp.asarray(y_class)
    attrs = ["coef_", "intercept_", "means_", "explained_variance_ratio_"]
else:
    from sklearn.linear_model import Ridge
    make, y, ydev = (lambda: Ridge(alpha=1.0, solver="svd")), y_reg, gp.asarray(y_reg)
    attrs = ["coef_", "intercept_"]

want, est_np = fit(make, X, y, attrs)
with sklearn.config_context(array_api_dispatch=True):
    Xd = gp.asarray(X)
    got, est_gp = fit(make, Xd, ydev, attrs)
    if case == "pca":
        pred_gp, pred_np = host(est_gp.transform(Xd)), est_np.transform(X)
    else:
        pred_gp, pred_np = host(est_gp.predict(Xd)), est_np.predict(X)
    on_device = isinstance(getattr(est_gp, attrs[0]), gp.ndarray)
pred_err = float(np.max(np.abs(pred_gp - pred_np))) / max(1.0, float(np.max(np.abs(pred_np))))
out = {"on_device": on_device, "pred": pred_err, "pred_kind": pred_np.dtype.kind}
for a in attrs:
    g, w = np.asarray(got[a], dtype=np.float64), np.asarray(want[a], dtype=np.float64)
    assert g.shape == w.shape, (a, g.shape, w.shape)
    out[a] = float(np.max(np.abs(g - w)) / max(1.0, float(np.max(np.abs(w)))))
print(json.dumps(out))
"""


@pytest.mark.parametrize("case", ["pca", "lda", "ridge"])
def test_sklearn_estimators_fit_gpuarr_arrays(case, tmp_path, rng):
    script = tmp_path / "fit.py"
    script.write_text(textwrap.dedent(SCRIPT))
    root = os.path.dirname(os.path.dirname(os.path.abspath(gp.__file__)))
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    seed = int(rng.integers(2**32))
    r = subprocess.run([sys.executable, str(script), case, str(seed)], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out.pop("on_device"), "the fitted model's arrays are not device arrays"
    if out.pop("pred_kind") in "iub":          # class labels: the same predictions
        assert out.pop("pred") == 0.0
    for name, err in out.items():
        assert err < 1e-8, (name, err)
