"""Fields Caffe's schema has that change nothing here, and why: one INFO line per field a layer sets."""

from __future__ import annotations

from caffe_core.proto import caffe_pb2

CUDNN = 2  # the CUDNN value of every <Layer>Parameter.Engine enum

ENGINE_NOTE = ("{block}.engine: CUDNN selects cuDNN in Caffe; this project has one implementation of each "
               "layer, which gives Caffe's numbers, so the engine changes nothing here")
NOTES = {
    ("convolution_param", "force_nd_im2col"): (
        "convolution_param.force_nd_im2col makes Caffe use its N-D im2col for 2-D too, with the same "
        "numbers; this project has one im2col for any number of axes, so it changes nothing here"),
    ("python_param", "share_in_parallel"): (
        "python_param.share_in_parallel is never read by Caffe 1.0; ranks here are processes, which "
        "share no layer, so it changes nothing here"),
    ("recurrent_param", "debug_info"): (
        "recurrent_param.debug_info makes Caffe log its unrolled net's debug info; the recurrent layers "
        "here run without an unrolled net, so there is nothing to log"),
    ("data_param", "force_encoded_color"): (
        "data_param.force_encoded_color is never read by Caffe 1.0 (transform_param.force_color decides "
        "the channels of encoded images), so it changes nothing here"),
}


def inert_field_notes(param: caffe_pb2.LayerParameter) -> list[str]:
    """Why each field the layer sets, among those that change nothing here, changes nothing."""
    notes = []
    for field, value in param.ListFields():
        if field.message_type is None or field.is_repeated:
            continue
        engine = value.DESCRIPTOR.fields_by_name.get("engine")
        if engine is not None and engine.enum_type is not None and value.engine == CUDNN:
            notes.append(ENGINE_NOTE.format(block=field.name))
        for (block, name), note in NOTES.items():
            if field.name == block and getattr(value, name):
                notes.append(note)
    return notes
