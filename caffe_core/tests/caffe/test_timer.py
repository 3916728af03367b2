"""caffe.Timer: measures milliseconds between start and the first read."""

import time

import caffe


def test_timer_measures_and_reading_stops_it(caplog):
    timer = caffe.Timer()
    assert timer.ms == 0.0
    assert "Timer has never been run" in caplog.text
    timer.start()
    time.sleep(0.01)
    first = timer.ms
    time.sleep(0.01)
    assert first >= 9.0 and timer.ms == first
