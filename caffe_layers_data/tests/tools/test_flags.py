"""gflags spellings accepted by the data tools."""

from __future__ import annotations

import pytest

from caffe_layers_data.tools.flags import normalise_argv


def test_single_dash_and_boolean_spellings():
    argv = ["-gray", "--shuffle=false", "--noencoded", "-backend=leveldb", "root/", "-resize_width", "3"]
    assert normalise_argv(argv, ("gray", "shuffle", "encoded")) == [
        "--gray", "--no-shuffle", "--no-encoded", "--backend=leveldb", "root/", "--resize_width", "3"]


def test_bad_boolean_value_is_refused():
    with pytest.raises(SystemExit, match="--gray expects true or false"):
        normalise_argv(["--gray=maybe"], ("gray",))


def test_single_dash_works_for_short_flag_names_too():
    # gflags treats -flag as --flag whatever the name's length; only a bare "-x" is left to argparse.
    assert normalise_argv(["-ab", "-ab=1", "-h"], ()) == ["--ab", "--ab=1", "-h"]


def test_no_prefix_negates_only_boolean_flags():
    # gflags' --noX is "X=false" for a bool flag X; other flags that happen to start with "no" are kept.
    argv = ["--nodes=3", "--noise", "--nogray"]
    assert normalise_argv(argv, ("gray",)) == ["--nodes=3", "--noise", "--no-gray"]


def test_a_negative_number_stays_a_flags_value():
    # gflags takes `--resize_width -12` as the value -12; only a dash and a letter start a flag.
    argv = ["--resize_width", "-12", "--mean", "-1.5"]
    assert normalise_argv(argv, []) == argv
