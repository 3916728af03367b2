"""Data layer: Caffe's golden LMDB/LevelDB cases, wrap-around, prefetching, and errors on bad input."""

from __future__ import annotations

import gc
import io
import threading

import numpy as np
import pytest
from PIL import Image

from caffe_core import runtime
from caffe_core.errors import CaffeError, LayerSetupError
from caffe_core.proto import caffe_pb2


@pytest.mark.parametrize("case", ["data_lmdb_raw", "data_lmdb_encoded", "data_leveldb"])
def test_golden_case_reproduces_caffe_bit_for_bit(dt, golden_copy, case):
    _, cfg = golden_copy(case)
    assert dt.run_case(cfg) == []


def _images(n: int, shape=(1, 2, 3)) -> list[np.ndarray]:
    return [np.full(shape, i, dtype=np.uint8) for i in range(n)]


def test_batches_wrap_around_the_end_without_padding(dt, tmp_path, data_log):
    dt.write_db(tmp_path / "db", _images(5), labels=[10, 11, 12, 13, 14])
    net = dt.net(dt.data_net(str(tmp_path / "db"), 3))
    seen = []
    for _ in range(4):
        net.forward()
        seen.append(net.blob_by_name("label").cpu_data().tolist())
    assert seen == [[10, 11, 12], [13, 14, 10], [11, 12, 13], [14, 10, 11]]
    assert np.array_equal(net.blob_by_name("data").cpu_data()[:, 0, 0, 0], [4, 0, 1])
    assert "Restarting data prefetching from start." in data_log.text


@pytest.mark.parametrize(("phase", "rank", "want"), [
    ("TRAIN", 0, [[10, 12, 14], [11, 13, 10]]), ("TRAIN", 1, [[11, 13, 10], [12, 14, 11]]),
    ("TEST", 1, [[10, 11, 12], [13, 14, 10]])])
def test_each_of_several_solvers_keeps_every_nth_record(dt, tmp_path, monkeypatch, phase, rank, want):
    # Caffe's DataLayer::Skip: rank r keeps records r, r+N, ... counting across restarts; TEST keeps all.
    monkeypatch.setattr(runtime, "_solver_count", 2)
    monkeypatch.setattr(runtime, "_solver_rank", rank)
    dt.write_db(tmp_path / "db", _images(5), labels=[10, 11, 12, 13, 14])
    net = dt.net(dt.data_net(str(tmp_path / "db"), 3), getattr(caffe_pb2, phase))
    seen = []
    for _ in range(2):
        net.forward()
        seen.append(net.blob_by_name("label").cpu_data().tolist())
    assert seen == want



def test_three_solvers_keep_records_at_offsets_of_their_rank(dt, tmp_path, monkeypatch):
    # DataLayer::Skip keeps offset_ % 3 == 1: stream offsets 1, 4, 7, 10 are records 1, 4, 2, 0 of 5.
    monkeypatch.setattr(runtime, "_solver_count", 3)
    monkeypatch.setattr(runtime, "_solver_rank", 1)
    dt.write_db(tmp_path / "db", _images(5), labels=[10, 11, 12, 13, 14])
    net = dt.net(dt.data_net(str(tmp_path / "db"), 2), caffe_pb2.TRAIN)
    seen = []
    for _ in range(2):
        net.forward()
        seen.append(net.blob_by_name("label").cpu_data().tolist())
    assert seen == [[11, 14], [12, 10]]

def test_float_data_datums_are_read_as_floats(dt, tmp_path):
    datum = caffe_pb2.Datum(channels=1, height=1, width=2, label=3, float_data=[0.25, -1.5])
    dt.write_records(tmp_path / "db", {b"a": datum})
    net = dt.net(dt.data_net(str(tmp_path / "db"), 2, "scale: 2"))
    net.forward()
    assert net.blob_by_name("data").cpu_data().ravel().tolist() == [0.5, -3.0, 0.5, -3.0]


def test_train_crop_and_mirror_are_deterministic_under_the_seed(dt, tmp_path):
    images = [np.arange(48, dtype=np.uint8).reshape(1, 6, 8) + i for i in range(4)]
    dt.write_db(tmp_path / "db", images)
    text = dt.data_net(str(tmp_path / "db"), 4, "crop_size: 3 mirror: true")

    def batches():
        runtime.set_random_seed(7)
        net = dt.net(text, caffe_pb2.TRAIN)
        out = []
        for _ in range(3):
            net.forward()
            out.append(net.blob_by_name("data").cpu_data().copy())
        return np.stack(out)

    first, second = batches(), batches()
    assert np.array_equal(first, second)
    crops = first.reshape(-1, 3, 3)
    assert len({c.tobytes() for c in crops}) > 1
    for crop in crops:
        row = crop[0]
        assert abs(row[1] - row[0]) == 1 and abs(crop[1, 0] - crop[0, 0]) == 8


def test_test_phase_mirror_flips_some_items(dt, tmp_path):
    dt.write_db(tmp_path / "db", [np.arange(4, dtype=np.uint8).reshape(1, 1, 4)] * 2)
    net = dt.net(dt.data_net(str(tmp_path / "db"), 2, "mirror: true"))
    rows = set()
    for _ in range(8):
        net.forward()
        rows |= {tuple(r) for r in net.blob_by_name("data").cpu_data().reshape(2, 4).tolist()}
    assert rows == {(0, 1, 2, 3), (3, 2, 1, 0)}


def test_single_top_outputs_only_data(dt, tmp_path):
    dt.write_db(tmp_path / "db", _images(2))
    net = dt.net(f"""layer {{ name: "d" type: "Data" top: "data"
        data_param {{ source: "{tmp_path / 'db'}" backend: LMDB batch_size: 2 }} }}""")
    net.forward()
    assert net.blob_by_name("data").shape == (2, 1, 2, 3)


def test_leveldb_can_be_reopened_once_the_net_is_gone(dt, tmp_path):
    dt.write_db(tmp_path / "db", _images(3), backend="leveldb")
    text = dt.data_net(str(tmp_path / "db"), 2, backend="LEVELDB")
    net = dt.net(text)
    net.forward()
    del net
    gc.collect()
    reopened = dt.net(text)
    reopened.forward()
    assert reopened.blob_by_name("label").cpu_data().tolist() == [0, 1]


def test_prefetch_thread_stops_when_the_net_is_collected(dt, tmp_path):
    dt.write_db(tmp_path / "db", _images(3))
    before = {t for t in threading.enumerate() if t.name.startswith("prefetch")}
    net = dt.net(dt.data_net(str(tmp_path / "db"), 2))
    net.forward()
    del net
    gc.collect()
    left = {t for t in threading.enumerate() if t.name.startswith("prefetch")} - before
    assert not any(t.is_alive() for t in left)


def test_missing_database_is_a_build_error_naming_it(dt, tmp_path):
    with pytest.raises(LayerSetupError, match=r"layer 'data'.*lmdb database '.*nowhere' not found"):
        dt.net(dt.data_net(str(tmp_path / "nowhere"), 2))


def test_empty_database_is_a_build_error(dt, tmp_path):
    dt.write_db(tmp_path / "db", [])
    with pytest.raises(LayerSetupError, match="is empty"):
        dt.net(dt.data_net(str(tmp_path / "db"), 2))


def test_datum_size_mismatch_in_first_batch_fails_at_build_naming_the_key(dt, tmp_path):
    dt.write_db(tmp_path / "db", [np.zeros((1, 2, 3), np.uint8), np.zeros((1, 3, 3), np.uint8)])
    with pytest.raises(LayerSetupError, match=r"record '00000001'.*1x3x3.*record '00000000'.*1x2x3"):
        dt.net(dt.data_net(str(tmp_path / "db"), 2))


def test_datum_size_mismatch_later_is_raised_by_forward_not_hung(dt, tmp_path):
    images = _images(4) + [np.zeros((3, 2, 3), np.uint8)] + _images(1)
    dt.write_db(tmp_path / "db", images)
    net = dt.net(dt.data_net(str(tmp_path / "db"), 2))
    net.forward()
    net.forward()
    with pytest.raises(CaffeError, match=r"record '00000005'.*1x2x3.*record '00000004'.*3x2x3"):
        net.forward()


def test_corrupt_encoded_record_names_the_key(dt, tmp_path):
    dt.write_records(tmp_path / "db", {b"bad": caffe_pb2.Datum(data=b"not a png", encoded=True)})
    with pytest.raises(LayerSetupError, match=r"record 'bad'.*cannot decode image"):
        dt.net(dt.data_net(str(tmp_path / "db"), 1))


def test_mean_file_shape_must_match_the_uncropped_data(dt, golden_copy, tmp_path):
    golden_copy("data_lmdb_raw")
    dt.write_db(tmp_path / "small", [np.zeros((3, 12, 12), np.uint8)])
    with pytest.raises(LayerSetupError, match=r"mean_file mean.binaryproto is 3x16x20 but record '00000000'"):
        dt.net(dt.data_net(str(tmp_path / "small"), 1, 'crop_size: 10 mean_file: "mean.binaryproto"'))


def test_crop_larger_than_the_data_is_an_error(dt, tmp_path):
    dt.write_db(tmp_path / "db", _images(1))
    with pytest.raises(LayerSetupError, match="crop_size 5 is larger than record '00000000'"):
        dt.net(dt.data_net(str(tmp_path / "db"), 1, "crop_size: 5"))


def test_force_gray_decodes_encoded_png_with_libpng_weights(dt, tmp_path):
    rgb = np.array([[[200, 10, 30], [0, 255, 7]]], dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format="PNG")
    dt.write_records(tmp_path / "db", {b"k": caffe_pb2.Datum(data=buffer.getvalue(), encoded=True, label=1)})
    net = dt.net(dt.data_net(str(tmp_path / "db"), 1, "force_gray: true"))
    net.forward()
    want = [(9797 * 200 + 19234 * 10 + 3737 * 30) >> 15, (19234 * 255 + 3737 * 7) >> 15]
    assert net.blob_by_name("data").cpu_data().ravel().tolist() == want


def test_force_color_on_raw_datum_is_ignored_with_an_error_log(dt, tmp_path, data_log):
    dt.write_db(tmp_path / "db", [np.zeros((1, 2, 2), np.uint8)])
    net = dt.net(dt.data_net(str(tmp_path / "db"), 1, "force_color: true"))
    net.forward()
    assert net.blob_by_name("data").shape == (1, 1, 2, 2)
    assert "force_color and force_gray only for encoded datum" in data_log.text


def test_missing_mean_file_names_it(dt, tmp_path):
    dt.write_db(tmp_path / "db", _images(1))
    with pytest.raises(CaffeError, match=r"nomean.binaryproto: file not found"):
        dt.net(dt.data_net(str(tmp_path / "db"), 1, f'mean_file: "{tmp_path / "nomean.binaryproto"}"'))
