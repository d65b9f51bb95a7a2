"""The optional CUDA libraries' loaders (gpuarr/cuda/_libs.py and its
users, cufft.py and cublas.py) as their tests check them, without a GPU."""
import pytest

from gpuarr.cuda import _libs


def missing_library_message(monkeypatch, tmp_path, module, soname, find, error):
    """The message of `error` that find() raises when `module`'s library
    (file name `soname`) is in none of the four kinds of place searched;
    checks that it names every one of them."""
    monkeypatch.setattr(module._LIB, "lib", None)
    site = tmp_path / "site-packages" / "nvidia" / "cu13" / "lib"
    monkeypatch.setattr(module, "_candidates", lambda: [
        ("$CUDA_HOME/lib64", str(tmp_path / "no-cuda" / "lib64" / soname)),
        (str(site), str(site / soname)),
        (_libs.SYSTEM, soname.replace(".so", "-does-not-exist.so")),
        ("/usr/local/cuda/lib64", str(tmp_path / "no-local" / soname))])
    with pytest.raises(error) as info:
        find()
    msg = str(info.value)
    for place in ("$CUDA_HOME/lib64", str(site), _libs.SYSTEM, "/usr/local/cuda/lib64"):
        assert place in msg
    return msg
