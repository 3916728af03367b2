"""The layer catalogue (`caffe-packs docs`): entries, counts and parameter defaults."""

from types import SimpleNamespace

from caffe_core import catalogue
from caffe_core.proto import caffe_pb2


def test_a_type_two_packs_provide_names_the_other_pack():
    text = catalogue.catalogue_markdown()
    assert ("### Twin\n\nCopies its bottom.\n\n- bottoms: any number; tops: any number\n"
            "- parameters: none of its own\n\nAlso provided by: caffe-zzz-testpack.\n") in text
    assert ("### Twin\n\nMultiplies its bottom by zzz_param.mul.\n\n- bottoms: 1; tops: 1\n"
            "- parameters: none of its own\n\nAlso provided by: caffe-rival-testpack.\n") in text


def test_counts_one_top_per_bottom():
    cls = SimpleNamespace(exact_num_bottom_blobs=-1, min_bottom_blobs=1, max_bottom_blobs=-1,
                          exact_num_top_blobs=-1, min_top_blobs=1, max_top_blobs=-1,
                          equal_num_bottom_top_blobs=True)
    assert catalogue._count(cls, "top") == "one per bottom"
    assert catalogue._count(cls, "bottom") == "at least 1"


def test_string_defaults_are_quoted():
    field = caffe_pb2.WindowDataParameter.DESCRIPTOR.fields_by_name["crop_mode"]
    assert catalogue._default_text(field) == "'warp'"
