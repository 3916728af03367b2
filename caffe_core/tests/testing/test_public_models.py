"""caffe_core.testing.public_models: the folder CAFFE_PUBLIC_MODELS names, and skipping without it."""

import pytest

from caffe_core.testing import public_models
from caffe_core.testing.public_models import (
    VARIABLE,
    PublicModelsError,
    find_public_model,
    public_model,
    public_model_params,
    public_models_folder,
)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A public-models folder holding a/net.prototxt and a/solver.prototxt, named by the variable."""
    (tmp_path / "a").mkdir()
    for name in ("net.prototxt", "solver.prototxt"):
        (tmp_path / "a" / name).write_text("")
    monkeypatch.setenv(VARIABLE, str(tmp_path))
    return tmp_path


def test_a_model_is_found_under_the_folder(folder):
    assert public_models_folder() == folder
    net = folder / "a" / "net.prototxt"
    assert public_model("a/net.prototxt") == find_public_model("a/net.prototxt") == net


def test_without_the_variable_a_test_skips_naming_it(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    assert public_models_folder() is None
    with pytest.raises(pytest.skip.Exception, match=f"set {VARIABLE} to a folder of the public models"):
        public_model("a/net.prototxt")


def test_without_the_variable_a_script_gets_an_error_naming_it(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    with pytest.raises(PublicModelsError, match=f"a/net.prototxt is a public model: set {VARIABLE}"):
        find_public_model("a/net.prototxt")


def test_an_empty_variable_counts_as_unset(monkeypatch):
    monkeypatch.setenv(VARIABLE, "")
    assert public_models_folder() is None


def test_a_variable_that_names_no_folder_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv(VARIABLE, str(tmp_path / "nowhere"))
    with pytest.raises(PublicModelsError, match="nowhere is not a folder"):
        public_models_folder()


def test_a_missing_model_is_an_error_not_a_skip(folder):
    with pytest.raises(PublicModelsError, match="has no a/other.prototxt"):
        public_model("a/other.prototxt")


def test_params_list_the_matching_files_by_their_path_under_the_folder(folder):
    params = public_model_params("**/*net.prototxt")
    assert [(p.id, p.values) for p in params] == [("a/net.prototxt", (folder / "a" / "net.prototxt",))]


def test_params_without_the_variable_are_one_skipped_case(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    [param] = public_model_params("**/*.prototxt")
    [mark] = param.marks
    assert mark.name == "skip" and mark.kwargs["reason"] == public_models.SKIP_REASON
