"""InnerProduct[happynear] (`normalize: true`): weight rows rescaled in the blob before the product (the
fork's epsilon per mode), BVLC's backward of the normalised weights, gradient of the input; a plain
InnerProduct stays the std pack's."""

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob

TEXT = ('name: "fc6" type: "InnerProduct" bottom: "x" top: "y" inner_product_param { num_output: 3 '
        'normalize: true bias_term: false weight_filler { type: "gaussian" std: 0.5 } }')
W = np.array([[3.0, 4.0], [0.0, 2.0], [1.0, 1.0]], dtype=np.float32)
X = np.array([[1.0, 2.0], [-1.0, 0.5]], dtype=np.float32)


def run(make_layer, blob_of, text=TEXT):
    layer = make_layer(text)
    bottom, top = [blob_of(X)], [Blob()]
    layer.setup(bottom, top)
    layer.blobs[0].mutable_cpu_data()[...] = W
    layer.forward(bottom, top)
    return layer, bottom, top


def test_picks_the_variant_by_the_field(make_layer):
    assert type(make_layer(TEXT)).__name__ == "NormalizedInnerProductLayer"
    plain = TEXT.replace("normalize: true", "normalize: false")
    assert type(make_layer(plain)).__module__ == "caffe_layers_std.common.inner_product"


def test_normalises_the_weight_blob_then_multiplies(make_layer, blob_of):
    layer, _, top = run(make_layer, blob_of)
    eps = 1e-12 if runtime.mode() == runtime.GPU_MODE else 1e-6
    unit = W / np.sqrt((W.astype(np.float64) ** 2).sum(axis=1, keepdims=True) + eps)
    np.testing.assert_allclose(layer.blobs[0].cpu_data(), unit, rtol=1e-6)
    np.testing.assert_allclose(layer.blobs[0].cpu_data()[0], [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(top[0].cpu_data(), X @ unit.T, rtol=1e-6)


def test_with_bias(make_layer, blob_of):
    layer = make_layer(TEXT.replace("bias_term: false", "bias_filler { type: \"constant\" value: 0.25 }"))
    bottom, top = [blob_of(X)], [Blob()]
    layer.setup(bottom, top)
    layer.blobs[0].mutable_cpu_data()[...] = W
    layer.forward(bottom, top)
    expected = [0.6 + 1.6 + 0.25, 2 * 1.0 + 0.25, 3 / np.sqrt(2) + 0.25]
    np.testing.assert_allclose(top[0].cpu_data()[0], expected,
                               rtol=1e-6)


def test_backward_is_bvlcs_of_the_normalised_weights(make_layer, blob_of):
    # The fork does not differentiate through the normalisation: dW = dy^T x exactly, dx = dy W_unit.
    layer, bottom, top = run(make_layer, blob_of)
    dy = np.array([[1.0, 0.0, 2.0], [0.5, -1.0, 0.0]], dtype=np.float32)
    top[0].mutable_cpu_diff()[...] = dy
    layer.blobs[0].mutable_cpu_diff()[...] = 0
    layer.backward(top, [True], bottom)
    np.testing.assert_allclose(layer.blobs[0].cpu_diff(), dy.T @ X, rtol=1e-6)
    np.testing.assert_allclose(bottom[0].cpu_diff(), dy @ layer.blobs[0].cpu_data(), rtol=1e-6)


def test_gradient_of_the_input(make_layer, gaussian):
    # Once normalised the rows stay so, and the input's gradient is BVLC's of them. GradientChecker also
    # perturbs every learnable blob, whose diff here is not the gradient of the normalised product (the
    # fork's choice, pinned by hand above), so the input is checked by central differences here, as the
    # checker does (objective 1/2 sum y^2, float32 step 1e-2, threshold 1e-2 of max(|a|, |b|, 1)).
    layer = make_layer(TEXT)
    bottom, top = [gaussian((3, 4))], [Blob()]
    layer.setup(bottom, top)

    def objective():
        layer.forward(bottom, top)
        return 0.5 * float((top[0].cpu_data().astype(np.float64) ** 2).sum())

    objective()
    top[0].mutable_cpu_diff()[...] = top[0].cpu_data()
    layer.backward(top, [True], bottom)
    analytic = bottom[0].cpu_diff().copy().ravel()
    step = np.float32(1e-2)
    for index in range(bottom[0].count):
        original = bottom[0].cpu_data().ravel()[index]
        values = []
        for shifted in (original + step, original - step):
            bottom[0].mutable_cpu_data().reshape(-1)[index] = shifted
            values.append(objective())
        bottom[0].mutable_cpu_data().reshape(-1)[index] = original
        estimated = (values[0] - values[1]) / (2 * float(step))
        assert abs(analytic[index] - estimated) <= 1e-2 * max(abs(analytic[index]), abs(estimated), 1.0)
