"""The machinery Convolution and Deconvolution share: parameters, weight blobs, shapes and the batched GEMMs.

Both layers are written in convolution's orientation: the "conv input" is the bottom of Convolution and
the top of Deconvolution. The batch is processed in chunks of images, each one matrix product per group:
the weights (G, M/G, K/G) times the columns (G, K/G, points * images), with K = C_in * prod(kernel). The
columns hold the chunk's batch innermost for narrow outputs (long window copies; the product is then
transposed into the images' outputs) or outermost (each image's product lands in its output as it is;
where those products are too small for OpenBLAS to share out, the host threads take the images instead).
A chunk stays within SCRATCH_BUDGET_BYTES of scratch, all carved from the thread's shared workspace;
backward rebuilds the columns, as Caffe does, unless the forward pass left them there and the input has not
been written since (no other layer carved the scratch in between, and its data's version is unchanged).
For stride-1 convolutions with outputs as large as their inputs and no more output than input channels,
the input's gradient is itself a convolution (of the output's gradient, with the flipped, transposed
weights), cheaper than col2im's scattered additions.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blas import gemm_accumulate
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.host_threads import assign, split_over, thread_count
from caffe_core.layer import Layer
from caffe_core.layer_bases.convolution_blobs import set_up_convolution_blobs
from caffe_core.layer_bases.kernel_geometry import (
    KernelGeometry,
    check_convolution_bottoms,
    read_layer_geometry,
    refuse_empty_output,
    spatial_shape,
)
from caffe_layers_vision import workspace
from caffe_layers_vision.im2col_ops import (
    batch_first,
    batch_last,
    col2im,
    im2col,
    needs_padded_copy,
    padded_shape,
)
from caffe_layers_vision.workspace import Workspace, carved_bytes, shared_scratch

# A chunk holds at least this many output points and multiply-adds (when the batch has them): fewer make
# the matrix products slow, more only add scratch and cache misses (measured on CaffeNet and LeNet).
MIN_CHUNK_POINTS = 2048
MIN_CHUNK_FLOPS = 100e6
# OpenBLAS multiplies on one thread a product of fewer multiply-adds than this per thread it has
# (SMP_THRESHOLD_MIN x GEMM_MULTITHREAD_THRESHOLD in its interface/gemm.c); images whose products are that
# small are convolved side by side on the host threads instead, each thread its own images' columns too.
ONE_THREAD_MULTIPLY_ADDS = 4 * 65536
# Copying one out_width-long run of a batch-outermost window costs about as much as this many values of a
# batch-innermost transpose (measured with numpy on CaffeNet's and LeNet's convolutions).
WINDOW_RUN_COST = 15


class BaseConvolutionLayer(Layer):
    """Convolution's parameters, learnable blobs and GEMM helpers; subclasses choose the orientation."""

    min_bottom_blobs = 1
    min_top_blobs = 1
    equal_num_bottom_top_blobs = True
    reverse_dimensions = False

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads convolution_param with Caffe's checks and creates (or checks) the weight and bias blobs."""
        conv = self.layer_param.convolution_param
        self.channel_axis, self.params = read_layer_geometry(self, bottom[0])
        self.channels = bottom[0].shape_at(self.channel_axis)
        self.num_output = int(conv.num_output)
        self.group = int(conv.group)
        if self.num_output <= 0:
            raise self.error("convolution_param.num_output must be greater than 0")
        if self.group <= 0:
            raise self.error("convolution_param.group must be greater than 0")
        if self.channels % self.group:
            raise self.error(f"the input's {self.channels} channels are not divisible by group {self.group}")
        if self.num_output % self.group:
            raise self.error(f"num_output {self.num_output} is not a multiple of group {self.group}")
        if self.reverse_dimensions:
            self.conv_out_channels, self.conv_in_channels = self.channels, self.num_output
        else:
            self.conv_out_channels, self.conv_in_channels = self.num_output, self.channels
        self.bias_term = bool(conv.bias_term)
        weight_shape = (self.conv_out_channels, self.conv_in_channels // self.group, *self.params.kernel)
        set_up_convolution_blobs(self, conv, weight_shape, (self.num_output,))
        # Weight-sized arrays kept between calls (the flipped weights); batch-sized scratch is shared.
        self.workspace = Workspace()
        # What the chunk size, columns' layout and gradient method were chosen for (see reshape).
        self.chunking_key: tuple[int, tuple[int, ...], int] | None = None

    def compute_output_shape(self, input_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The top's spatial shape from the bottom's."""
        raise NotImplementedError

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Shapes the tops, then chooses the chunk size, the columns' layout and the input-gradient method."""
        self.bottom_spatial = spatial_shape(self, bottom[0], self.channel_axis, self.params)
        check_convolution_bottoms(self, bottom, self.channel_axis, self.channels)
        self.num = bottom[0].count_between(0, self.channel_axis)
        self.top_spatial = self.compute_output_shape(self.bottom_spatial)
        refuse_empty_output(self, self.params, self.bottom_spatial, self.top_spatial)
        top_shape = (*bottom[0].shape[: self.channel_axis], self.num_output, *self.top_spatial)
        for blob in top:
            blob.reshape(top_shape)
        if self.reverse_dimensions:
            self.conv_in_spatial, self.conv_out_spatial = self.top_spatial, self.bottom_spatial
        else:
            self.conv_in_spatial, self.conv_out_spatial = self.bottom_spatial, self.top_spatial
        chunking_key = (self.num, self.bottom_spatial, workspace.SCRATCH_BUDGET_BYTES)
        if chunking_key != self.chunking_key:
            self.chunking_key = chunking_key
            self.points = math.prod(self.conv_out_spatial)
            self.kernel_dim = self.conv_in_channels * math.prod(self.params.kernel)
            self.transposed_params = self.full_convolution_params()
            self.batch_inner = self.columns_batch_inner()
            self.chunk = self.images_per_chunk()
            # One image's columns are alike in both layouts; batch-outermost ones read unpadded images as is.
            self.batch_inner = self.batch_inner and self.chunk > 1

    def full_convolution_params(self) -> KernelGeometry | None:
        """The geometry that convolves the output's gradient into the input's where that is the cheaper way:
        stride 1, an output as large as the input (pad d(k-1) - p) and no more output than input channels
        (its columns are M/C times col2im's); None where col2im computes the input's gradient."""
        params = self.params
        if (any(s != 1 for s in params.stride) or self.conv_out_spatial != self.conv_in_spatial
                or self.conv_out_channels > self.conv_in_channels):
            return None
        pad = tuple(e - 1 - p for e, p in zip(params.extent, params.pad, strict=True))
        return KernelGeometry(params.kernel, params.stride, pad, params.dilation)

    def columns_batch_inner(self) -> bool:
        """Whether chunks of several images hold the batch innermost in their columns: where that saves
        more in window copies (K rows of out_width-long runs per image, each costing about as much as moving
        WINDOW_RUN_COST values) than the transposes of the product and the output's gradient cost (M rows)."""
        params = self.params
        if params.is_1x1 or params.stride[-1] > 1:
            return False
        return self.kernel_dim * WINDOW_RUN_COST > self.conv_out_channels * self.conv_out_spatial[-1]

    def images_per_chunk(self) -> int:
        """Images per chunk, within SCRATCH_BUDGET_BYTES: batch-innermost columns, whose runs lengthen with
        the chunk, take as many as fit; batch-outermost ones enough for MIN_CHUNK_POINTS and _FLOPS."""
        if self.batch_inner:
            wanted = self.num
        else:
            flops = 2 * self.conv_out_channels * self.kernel_dim * self.points
            wanted = max(-(-MIN_CHUNK_POINTS // self.points), -(-int(MIN_CHUNK_FLOPS) // max(1, flops)))
        low, high = 1, max(1, min(wanted, self.num))
        while low < high:
            middle = (low + high + 1) // 2
            if self.scratch_bytes(middle) <= workspace.SCRATCH_BUDGET_BYTES:
                low = middle
            else:
                high = middle - 1
        return low

    def image_chunks(self) -> Iterator[slice]:
        """The batch in slices of `chunk` images."""
        for start in range(0, self.num, self.chunk):
            yield slice(start, min(start + self.chunk, self.num))

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Per top: the bias gradient here, the weight and bottom gradients by the subclass."""
        for index, (source, target) in enumerate(zip(bottom, top, strict=True)):
            top_diff = target.diff_on(side)
            if self.bias_term and self.param_propagate_down(1):
                self.bias_gradient(side, top_diff)
            if self.param_propagate_down(0) or propagate_down[index]:
                self.weight_and_bottom_gradients(side, index, source, top_diff, propagate_down[index])

    def weight_and_bottom_gradients(self, side: Side, index: int, source: Blob, top_diff: Array,
                                    to_bottom: bool) -> None:
        """Accumulates the weight diff (if wanted) and writes the diff of bottom `index` if `to_bottom`."""
        raise NotImplementedError

    # ----- scratch: what a chunk needs is carved from one buffer of the thread's shared workspace -----
    def scratch_bytes(self, count: int) -> int:
        """The most scratch any one call below needs for `count` images."""
        return max(carved_bytes([shape for shape in shapes if shape is not None]) for shapes in (
            self._convolve_shapes(count, self.params, self.conv_in_channels, self.conv_in_spatial,
                                  self.conv_out_spatial, self.conv_out_channels),
            self._transposed_shapes(count),
            self._weight_shapes(count)))

    def _carve(self, xp: ArrayModule, shapes: Sequence[tuple[int, ...] | None],
               contents: object = None) -> list[Array | None]:
        present = [shape for shape in shapes if shape is not None]
        arrays = iter(shared_scratch().arrays(xp, "convolution", present, contents))
        return [None if shape is None else next(arrays) for shape in shapes]

    def _columns_shapes(self, count: int, params: KernelGeometry, channels: int, in_spatial: tuple[int, ...],
                        out_spatial: tuple[int, ...], stacked: bool) -> list[tuple[int, ...] | None]:
        """Columns and padded input (None where not needed) for im2col of `count` images; with `stacked`,
        1x1 columns multiplied image by image are the images themselves."""
        if params.is_1x1 and (count == 1 or (stacked and self._by_image(count))):
            return [None, None]
        cols = (channels * math.prod(params.kernel), count * math.prod(out_spatial))
        return [cols, self._padded_shape(count, params, channels, in_spatial, out_spatial)]

    def _padded_shape(self, count: int, params: KernelGeometry, channels: int, in_spatial: tuple[int, ...],
                      out_spatial: tuple[int, ...]) -> tuple[int, ...] | None:
        if not needs_padded_copy(params, in_spatial, out_spatial, self.batch_inner):
            return None
        return padded_shape((count, channels, *in_spatial), params, out_spatial, self.batch_inner)

    def _by_image(self, count: int) -> bool:
        """Whether a chunk's products go straight into each image's output (no transpose pass)."""
        return count == 1 or not self.batch_inner

    def _convolve_shapes(self, count: int, params: KernelGeometry, channels: int, in_spatial: tuple[int, ...],
                         out_spatial: tuple[int, ...], outputs: int) -> list[tuple[int, ...] | None]:
        product = None if self._by_image(count) else (outputs, count * math.prod(out_spatial))
        return [*self._columns_shapes(count, params, channels, in_spatial, out_spatial, True), product]

    def _transposed_shapes(self, count: int) -> list[tuple[int, ...] | None]:
        if self.transposed_params is not None:
            return self._convolve_shapes(count, self.transposed_params, self.conv_out_channels,
                                         self.conv_out_spatial, self.conv_in_spatial, self.conv_in_channels)
        padded = self._padded_shape(count, self.params, self.conv_in_channels, self.conv_in_spatial,
                                    self.conv_out_spatial)
        return [(self.kernel_dim, count * self.points), padded, self._out_columns_shape(count)]

    def _weight_shapes(self, count: int) -> list[tuple[int, ...] | None]:
        # The columns come first, where the forward pass carves them; the output's gradient columns lie
        # where convolve_transposed finds them.
        return [*self._columns_shapes(count, self.params, self.conv_in_channels, self.conv_in_spatial,
                                      self.conv_out_spatial, False), self._out_columns_shape(count)]

    def _out_columns_shape(self, count: int) -> tuple[int, ...] | None:
        return None if count == 1 else (self.conv_out_channels, count * self.points)

    # ----- the chunk operations, in convolution's orientation -----
    def conv_input(self, array: Array) -> Array:
        """A conv-input blob's array as (num, conv_in_channels, *conv_in_spatial)."""
        return array.reshape(self.num, self.conv_in_channels, *self.conv_in_spatial)

    def conv_output(self, array: Array) -> Array:
        """A conv-output blob's array as (num, conv_out_channels, *conv_out_spatial)."""
        return array.reshape(self.num, self.conv_out_channels, *self.conv_out_spatial)

    def weights(self, side: Side) -> Array:
        """The weights as (G, M/G, K/G)."""
        return self.blobs[0].data_on(side).reshape(self.group, self.conv_out_channels // self.group, -1)

    def flipped_weights(self, side: Side) -> Array:
        """The weights of the input gradient's convolution, (G, C/G, M/G * prod(kernel)): each group's
        weights with input and output channels swapped and every kernel axis reversed."""
        axes = len(self.params.kernel)
        grouped = self.blobs[0].data_on(side).reshape(
            self.group, self.conv_out_channels // self.group, self.conv_in_channels // self.group,
            *self.params.kernel)
        flipped = grouped[(Ellipsis,) + (slice(None, None, -1),) * axes].swapaxes(1, 2)
        out = self.workspace.array(side.xp, "flipped_weights", flipped.shape)
        out[...] = flipped
        return out.reshape(self.group, self.conv_in_channels // self.group, -1)

    def convolve(self, side: Side, images: Array, out: Array, bias: Array | None,
                 columns_of: object = None) -> None:
        """Conv-output images (n, M, *out) = weights x im2col(conv-input images (n, C, *in)) (+ bias);
        `columns_of` names the images' contents, for weight_gradient to find their columns by."""
        self._convolve(side, self.weights(side), self.params, images, out, bias, self.conv_out_spatial,
                       columns_of)

    def convolve_transposed(self, side: Side, out_images: Array, images: Array, flipped: Array | None,
                            out_cols: Array | None = None) -> None:
        """Conv-input images (n, C, *in) = convolution^T of conv-output images (n, M, *out): a convolution
        with `flipped` (flipped_weights) where transposed_params exists, else weights^T x their columns
        (`out_cols` from weight_gradient when given), col2im'ed."""
        if self.transposed_params is not None:
            assert flipped is not None
            self._convolve(side, flipped, self.transposed_params, out_images, images, None,
                           self.conv_in_spatial)
            return
        cols, padded, out_buffer = self._carve(side.xp, self._transposed_shapes(images.shape[0]))
        # col2im's columns always have a shape here (see _transposed_shapes).
        assert cols is not None
        if out_cols is None:
            out_cols = self.output_columns(side.xp, out_images, out_buffer)
        weights = self.weights(side)
        product = cols.reshape(self.group, weights.shape[2], out_cols.shape[2])
        side.xp.matmul(weights.transpose(0, 2, 1), out_cols, out=product)
        col2im(side.xp, product, images, self.params, self.conv_out_spatial, padded, self.batch_inner)

    def weight_gradient(self, side: Side, images: Array, out_images: Array,
                        columns_of: object = None) -> Array:
        """Accumulates the weight diff from conv-input images and the conv-output images' diff; returns the
        latter laid out as the columns, which convolve_transposed can take while the scratch holds them.
        The images' columns are not rebuilt where convolve, given the same `columns_of`, left them."""
        xp, count = side.xp, images.shape[0]
        shapes = self._weight_shapes(count)
        kept = columns_of is not None and shared_scratch().holds(
            xp, "convolution", [shape for shape in shapes if shape is not None], columns_of)
        cols, padded, out_buffer = self._carve(xp, shapes)
        if kept or self.batch_inner or count == 1:
            out_cols = self.output_columns(xp, out_images, out_buffer)
            if not kept:
                cols = self._columns(xp, images, self.params, self.conv_out_spatial, cols, padded)
        else:
            # Batch outermost, each image's two copies are its own: one hand-over to the host threads.
            assert out_buffer is not None and cols is not None
            split_over(xp, count, out_buffer.size + cols.size, functools.partial(
                self._gradient_copies, xp, images, out_images, out_buffer, cols, padded))
            out_cols = out_buffer.reshape(self.group, -1, out_buffer.shape[1])
        assert cols is not None
        self.weight_gemm(side, cols.reshape(self.group, -1, cols.shape[-1]), out_cols)
        return out_cols

    def _gradient_copies(self, xp: ArrayModule, images: Array, out_images: Array, out_buffer: Array,
                         cols: Array, padded: Array | None, part: slice) -> None:
        """For images[part]: their output's gradient into batch-outermost out columns, and their columns."""
        count, outputs = images.shape[0], self.conv_out_channels
        target = out_buffer.reshape(outputs, count, self.points)[:, part]
        target[...] = out_images[part].reshape(-1, outputs, self.points).swapaxes(0, 1)
        self._image_columns(xp, images, self.params, self.conv_out_spatial, cols, padded, part)

    def output_columns(self, xp: ArrayModule, images: Array, out: Array | None) -> Array:
        """Conv-output images (n, M, *out) laid out as the columns, (G, M/G, points * n), copied into
        `out` unless n is 1 (when it may be None)."""
        count = images.shape[0]
        if count == 1:
            return images.reshape(self.group, -1, self.points)
        assert out is not None
        by_image = images.reshape(count, self.conv_out_channels, self.points)
        if self.batch_inner:
            assign(xp, out.reshape(self.conv_out_channels, self.points, count), batch_last(by_image))
        else:
            assign(xp, out.reshape(self.conv_out_channels, count, self.points), by_image.swapaxes(0, 1))
        return out.reshape(self.group, -1, out.shape[1])

    def _columns(self, xp: ArrayModule, images: Array, params: KernelGeometry, out_spatial: tuple[int, ...],
                 cols: Array | None, padded: Array | None) -> Array:
        """im2col of images (n, C, *in) as (C*prod(kernel), points * n), or (n, C, points) read in place."""
        count, channels = images.shape[:2]
        if cols is None:
            return images.reshape(channels, -1) if count == 1 else images.reshape(count, channels, -1)
        im2col(xp, images, params, out_spatial, cols, padded, self.batch_inner)
        return cols

    def _convolve(self, side: Side, weights: Array, params: KernelGeometry, images: Array, out: Array,
                  bias: Array | None, out_spatial: tuple[int, ...], columns_of: object = None) -> None:
        xp = side.xp
        count, channels = images.shape[:2]
        groups, outputs = weights.shape[0], weights.shape[0] * weights.shape[1]
        points = math.prod(out_spatial)
        shapes = self._convolve_shapes(count, params, channels, tuple(images.shape[2:]), out_spatial, outputs)
        cols, padded, product = self._carve(xp, shapes, None if shapes[0] is None else columns_of)
        target = out.reshape(count, outputs, points)
        if self._by_image(count):
            block = functools.partial(self._convolve_images, xp, weights, params, images, target, cols,
                                      padded, out_spatial)
            if weights.size * points <= ONE_THREAD_MULTIPLY_ADDS * thread_count():
                split_over(xp, count, target.size + (0 if cols is None else cols.size),
                           functools.partial(block, bias))
                return
            block(None, slice(None))
            if bias is not None:
                split_over(xp, count, target.size, lambda part: xp.add(target[part], bias[None, :, None],
                                                                       out=target[part]))
            return
        columns = self._columns(xp, images, params, out_spatial, cols, padded)
        # Several images' products are transposed through this buffer (see _convolve_shapes).
        assert product is not None
        xp.matmul(weights, columns.reshape(groups, -1, columns.shape[-1]),
                  out=product.reshape(groups, -1, product.shape[-1]))
        by_image = batch_first(product.reshape(outputs, points, count))
        if bias is None:
            assign(xp, target, by_image)
        else:
            split_over(xp, outputs, target.size, lambda part: xp.add(
                by_image[:, part], bias[None, part, None], out=target[:, part]))

    def _convolve_images(self, xp: ArrayModule, weights: Array, params: KernelGeometry, images: Array,
                         target: Array, cols: Array | None, padded: Array | None,
                         out_spatial: tuple[int, ...], bias: Array | None, part: slice) -> None:
        """Batch-outermost columns of images[part] and their products, straight into target[part] (n, M,
        points), plus the bias if given."""
        count, channels = images.shape[:2]
        groups, points = weights.shape[0], target.shape[2]
        if cols is None:
            by_image = images[part].reshape(-1, groups, channels // groups, points)
        else:
            part_cols = self._image_columns(xp, images, params, out_spatial, cols, padded, part)
            by_image = part_cols.reshape(groups, -1, part_cols.shape[1], points).transpose(2, 0, 1, 3)
        out = target[part]
        xp.matmul(weights, by_image, out=out.reshape(out.shape[0], groups, -1, points))
        if bias is not None:
            xp.add(out, bias[None, :, None], out=out)

    def _image_columns(self, xp: ArrayModule, images: Array, params: KernelGeometry,
                       out_spatial: tuple[int, ...], cols: Array, padded: Array | None, part: slice) -> Array:
        """im2col of images[part] into their part of batch-outermost columns; returns it, (K, n, points)."""
        part_cols = cols.reshape(cols.shape[0], images.shape[0], -1)[:, part]
        # Only a lone image, whose columns are alike in both layouts, comes with a batch-innermost buffer.
        part_padded = padded if padded is None or self.batch_inner else padded[:, part]
        im2col(xp, images[part], params, out_spatial, part_cols, part_padded, self.batch_inner)
        return part_cols

    def weight_gemm(self, side: Side, cols: Array, out_last: Array) -> None:
        """Accumulates the weight diff: batch-last conv-output diff x columns^T."""
        diff = self.blobs[0].mutable_diff_on(side)
        gemm_accumulate(out_last, cols.transpose(0, 2, 1),
                        diff.reshape(self.group, self.conv_out_channels // self.group, -1))

    def bias_gradient(self, side: Side, top_diff: Array) -> None:
        """Accumulates the bias diff: the top diff summed over everything but the channel axis (per image a
        product with ones, as Caffe's gemv with its bias multiplier)."""
        xp = side.xp
        points = math.prod(self.top_spatial)
        ones = xp.ones(points, dtype=top_diff.dtype)
        per_image = xp.matmul(top_diff.reshape(self.num, self.num_output, points), ones)
        self.blobs[1].mutable_diff_on(side)[...] += per_image.sum(axis=0)
