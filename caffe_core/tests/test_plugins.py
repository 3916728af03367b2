"""plugins: merging the dicts every plugin returns for a hook."""

from types import SimpleNamespace

import pytest

from caffe_core import plugins
from caffe_core.errors import PluginError
from caffe_core.hookspecs import hookimpl


def test_a_name_two_plugins_provide_is_refused_naming_both():
    first = SimpleNamespace(caffe_fillers=hookimpl(lambda: {"twice": object()}))
    second = SimpleNamespace(caffe_fillers=hookimpl(lambda: {"twice": object()}))
    plugins.register_plugin(first, name="test-first-pack")
    try:
        plugins.register_plugin(second, name="test-second-pack")
        try:
            with pytest.raises(PluginError, match="caffe_fillers: 'twice' is provided by both") as info:
                plugins.collect("caffe_fillers")
            assert "'test-first-pack'" in str(info.value) and "'test-second-pack'" in str(info.value)
            assert "uninstall one of them" in str(info.value)
        finally:
            plugins.unregister_plugin("test-second-pack")
    finally:
        plugins.unregister_plugin("test-first-pack")
