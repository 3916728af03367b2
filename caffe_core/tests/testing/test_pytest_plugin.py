"""The pytest plugin pack authors get with caffe-core: its fixtures, marker and the conformance suite,
run by pytester in a throwaway test folder."""

import textwrap

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture
def run(pytester):
    """Writes test files into a scratch folder and runs pytest there; returns the outcome counts."""

    def go(files: dict[str, str]) -> dict[str, int]:
        for name, text in files.items():
            path = pytester.path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))
        return pytester.runpytest("-p", "no:cacheprovider", "-q").parseoutcomes()

    return go


def test_fixtures_build_layers_blobs_and_find_golden_cases(run, pytester):
    golden = pytester.path / "golden" / "tiny"
    golden.mkdir(parents=True)
    (golden / "case.json").write_text("{}")
    outcomes = run({"sub/test_fixtures.py": """
        import numpy as np
        from caffe_core import runtime
        from caffe_core.blob import Blob
        from caffe_core.rng.caffe_stream import CaffeStream

        def test_layer_and_blobs(make_layer, blob_of, gaussian):
            layer, bottom, top = make_layer('type: "ZZZ" zzz_param { mul: 2 }'), blob_of([1, -2]), Blob()
            layer.setup([bottom], [top])
            layer.forward([bottom], [top])
            assert top.cpu_data().tolist() == [2.0, -4.0]
            assert gaussian((2, 3), seed=3).shape == (2, 3)

        def test_every_test_starts_in_cpu_mode_with_seed_1701():
            assert runtime.mode() == "cpu"
            assert runtime.rng().rand() == CaffeStream(1701).rand()

        def test_golden_case_is_found_in_a_parent_folder(golden_case):
            assert golden_case("tiny").name == "tiny"
    """})
    assert outcomes == {"passed": 3}


def test_missing_layer_types_skip_and_gpu_runs_skip_without_a_device(run, without_gpu):
    outcomes = run({"test_marks.py": """
        import pytest

        @pytest.mark.requires_layer_types("NoPackProvidesThis")
        def test_needs_a_type():
            raise AssertionError("must not run")

        @pytest.mark.requires_layer_types("ZZZ")
        def test_has_its_type():
            pass

        def test_both_modes(device_mode):
            assert device_mode == "cpu"
    """})
    assert outcomes == {"passed": 2, "skipped": 2}


def test_the_conformance_suite_passes_a_sound_pack_and_names_what_is_wrong(run, pytester):
    outcomes = run({"test_conformance.py": """
        from caffe_core.testing.conformance import Example, conformance_suite

        TestConformance = conformance_suite("caffe-zzz-testpack", examples={
            "ZZZ": Example("zzz_param { mul: 3 }"), "Twin": Example(),
            "Pick": Example(bottoms=[(2, 3), (2, 3)]), "Echo": Example()})
        TestNothing = conformance_suite("caffe-no-such-pack")
    """})
    # Twin is provided by two test packs, neither saying which layers it takes: its checks fail, as does the
    # pack-wide clash check; every other type passes; a distribution with no types fails (its per-type
    # checks have nothing to run).
    assert outcomes == {"passed": 11, "failed": 5, "skipped": 3}
    out = pytester.runpytest("-p", "no:cacheprovider", "-vv", "-k", "clash").stdout.str()
    assert "layer type 'Twin' is provided by caffe-rival-testpack, caffe-zzz-testpack" in out


def test_a_type_without_an_example_fails_unless_skipped_with_a_reason(run):
    outcomes = run({"test_conformance.py": """
        from caffe_core.testing.conformance import conformance_suite

        TestMissing = conformance_suite("caffe-zzz-testpack", skip={"Pick": "needs two bottoms", "Twin": "x",
                                                                           "Echo": "x"})
    """})
    # ZZZ has no example (two failures); Pick, Twin and Echo are skipped with their reasons; Twin's clash
    # remains.
    assert outcomes == {"passed": 4, "failed": 4, "skipped": 6}


def test_on_the_stand_in_gpu_runs_run_and_cuda_only_tests_skip(run, gpu_standin):
    outcomes = run({"test_standin.py": """
        import pytest
        from caffe_core import runtime
        from caffe_core.device import GPU

        def test_both_modes(device_mode):
            assert runtime.mode() == device_mode

        def test_gpu_mode_runs_on_the_stand_in(gpu_mode):
            assert GPU.xp.__name__ == "caffe_core.cupy_standin"

        @pytest.mark.cuda
        def test_kernel_against_its_reference():
            raise AssertionError("must not run on the stand-in")
    """})
    assert outcomes == {"passed": 3, "skipped": 1}


def test_a_type_whose_installed_pack_fails_to_import_fails_instead_of_skipping(run):
    # caffe-broken-testpack is installed with the core's tests and its module raises on import.
    outcomes = run({"test_broken.py": """
        import pytest
        from caffe_core.testing import require_layer_types

        @pytest.mark.requires_layer_types("Broken")
        def test_marked():
            from caffe_core import registry
            registry.layer_class("Broken")

        def test_required():
            require_layer_types("Broken")

        def test_absent():
            require_layer_types("NoPackProvidesThis")
    """})
    assert outcomes == {"failed": 2, "skipped": 1}


def test_a_provider_preferred_in_one_test_is_forgotten_after_it(run):
    outcomes = run({"test_prefer.py": """
        import pytest
        from caffe_core import registry
        from caffe_core.errors import PluginError

        def test_chooses(prefer_provider):
            prefer_provider("Pick", "caffe-zzz-testpack[sum]")
            assert registry.layer_class("Pick").__name__ == "PickSumLayer"

        def test_after_it_the_type_has_two_providers_again():
            with pytest.raises(PluginError, match="several distributions"):
                registry.layer_class("Pick")
    """})
    assert outcomes == {"passed": 2}
