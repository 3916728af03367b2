"""Name-size files read as the fork's stream loop: whitespace-separated triples, stopping at a bad one."""

import pytest

from caffe_layers_ssd.name_size import read_name_sizes


def test_reads_whitespace_separated_triples(tmp_path):
    path = tmp_path / "sizes.txt"
    path.write_text("000001 500 353\n000002 375 500 000003\n 500\t375\n\n")
    assert read_name_sizes(path) == [("000001", 500, 353), ("000002", 375, 500), ("000003", 500, 375)]


def test_stops_at_the_first_malformed_entry(tmp_path):
    path = tmp_path / "sizes.txt"
    path.write_text("a 10 20\nb ten 20\nc 30 40\n")
    assert read_name_sizes(path) == [("a", 10, 20)]


def test_integers_end_at_their_last_digit(tmp_path):
    path = tmp_path / "sizes.txt"
    path.write_text("a 10 20x 5 6\n")
    assert read_name_sizes(path) == [("a", 10, 20), ("x", 5, 6)]


def test_missing_file(tmp_path):
    with pytest.raises(OSError):
        read_name_sizes(tmp_path / "absent.txt")
