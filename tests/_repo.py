"""The repository's own scripts loaded as modules by the tests (they are not
packages): setup.py, tools/*.py."""
import importlib.util
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_script(name, *path):
    """The file REPO/path... executed as a module called `name`."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, *path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
