"""The conformance suite a layer pack turns on in one line of its tests:

    TestConformance = conformance_suite("caffe-layers-zzz", examples={"ZZZ": Example("zzz_param { mul: 3 }")})

For every layer type the distribution registers it checks that the class imports and is a layer of that
type; with an `Example` (the layer's parameter text and its bottoms) that the layer sets up, runs forward,
reshapes and runs forward again, and that backward fills finite diffs of the bottoms' and learnable blobs'
shapes. For the pack as a whole: its plugin, blocks and fields are valid and clash with no other installed
pack (what `caffe-packs check` reports). A type the pack cannot set up from shapes alone (it needs files,
say) is listed in `skip` with the reason.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pytest

from caffe_core import registry
from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.pack_check import installed_pack_problems
from caffe_core.proto import caffe_pb2
from caffe_core.testing.layers import blob_from, build_layer


@dataclasses.dataclass(frozen=True)
class Example:
    """How to set a type up: parameter text (after `type: "X"`), bottoms (shapes or arrays), top count.

    `propagate_down` says which bottoms backward reaches (default: those force_backward may reach);
    `prepare(layer)` runs after setup (to hand MemoryData its arrays, say).
    """

    params: str = ""
    bottoms: Sequence[Sequence[int] | np.ndarray] = ((2, 3, 4, 5),)
    tops: int = 1
    phase: caffe_pb2.Phase = caffe_pb2.TRAIN
    propagate_down: Sequence[bool] | None = None
    prepare: Callable[[Layer], None] | None = None


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _types_of(distribution: str) -> list[str]:
    wanted = _normalise(distribution)
    return sorted(name for name in registry.layer_types()
                  if any(_normalise(p.distribution) == wanted for p in registry.providers_of(name)))


def _bottom(spec: Sequence[int] | np.ndarray, seed: int) -> Blob:
    if isinstance(spec, np.ndarray):
        return blob_from(spec)
    return blob_from(np.random.default_rng(seed).standard_normal(tuple(spec)))


def conformance_suite(distribution: str, examples: Mapping[str, Example] | None = None,
                      skip: Mapping[str, str] | None = None) -> type:
    """A pytest test class checking every layer type of an installed distribution and its declarations."""
    example_of = dict(examples or {})
    skip_reason = dict(skip or {})
    types = _types_of(distribution)

    def example_layer(layer_type: str) -> tuple[Layer, list[Blob], list[Blob]]:
        if layer_type in skip_reason:
            pytest.skip(f"{layer_type}: {skip_reason[layer_type]}")
        if layer_type not in example_of:
            pytest.fail(f"no Example for layer type '{layer_type}': give one in "
                        f"conformance_suite(examples=...) or list it in skip with the reason")
        example = example_of[layer_type]
        wiring = "".join(f' bottom: "b{i}"' for i in range(len(example.bottoms))) + \
            "".join(f' top: "t{i}"' for i in range(example.tops))
        text = f'name: "conformance" type: "{layer_type}"{wiring} {example.params}'
        layer = build_layer(text, example.phase)
        bottom = [_bottom(spec, seed) for seed, spec in enumerate(example.bottoms)]
        top = [Blob() for _ in range(example.tops)]
        layer.setup(bottom, top)
        if example.prepare is not None:
            example.prepare(layer)
        return layer, bottom, top

    class PackConformance:
        """The core's conformance checks for one distribution's layer types and declarations."""

        def test_the_pack_registers_layer_types(self) -> None:
            assert types, f"no installed distribution '{distribution}' registers a layer type"

        @pytest.mark.parametrize("layer_type", types)
        def test_each_class_imports_and_is_a_layer_of_its_type(self, layer_type: str) -> None:
            for provider in registry.providers_of(layer_type):
                if _normalise(provider.distribution) != _normalise(distribution):
                    continue
                cls = provider.entry_point.load()
                assert isinstance(cls, type) and issubclass(cls, Layer), f"{provider.entry_point.value}"
                assert cls.type in ("", layer_type), f"{cls.__name__}.type is {cls.type!r}, not {layer_type}"

        @pytest.mark.parametrize("layer_type", types)
        def test_sets_up_runs_and_reshapes(self, layer_type: str) -> None:
            layer, bottom, top = example_layer(layer_type)
            layer.forward(bottom, top)
            shapes = [blob.shape for blob in top]
            layer.reshape(bottom, top)
            layer.forward(bottom, top)
            assert [blob.shape for blob in top] == shapes

        @pytest.mark.parametrize("layer_type", types)
        def test_backward_writes_finite_diffs_of_the_right_shapes(self, layer_type: str) -> None:
            layer, bottom, top = example_layer(layer_type)
            layer.forward(bottom, top)
            rng = np.random.default_rng(7)
            for blob in top:
                blob.mutable_cpu_diff()[...] = rng.standard_normal(blob.shape)
            for blob in layer.blobs:
                blob.mutable_cpu_diff()[...] = 0
            chosen = example_of[layer_type].propagate_down
            propagate_down = list(chosen) if chosen is not None else \
                [layer.allow_force_backward(i) for i in range(len(bottom))]
            layer.backward(top, propagate_down, bottom)
            for blob in [*bottom, *layer.blobs]:
                assert blob.cpu_diff().shape == blob.shape
                assert np.isfinite(blob.cpu_diff()).all()

        def test_plugin_blocks_fields_and_types_clash_with_nothing(self) -> None:
            wanted = _normalise(distribution)
            own = [str(p) for p in installed_pack_problems()
                   if any(_normalise(d.split("[")[0]) == wanted for d in p.distributions)]
            assert own == []

    return PackConformance
