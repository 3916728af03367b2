"""Caffe-style (glog) log lines through Python logging: `I1122 07:19:09.123456  4242 net.py:42] ...`."""

from __future__ import annotations

import datetime
import logging
import os
import sys
from typing import TextIO

ROOT_LOGGER = "caffe"


class GlogFormatter(logging.Formatter):
    """Formats records as glog does, so Caffe's log-parsing tools read our logs."""

    def format(self, record: logging.LogRecord) -> str:
        """One glog line per record."""
        when = datetime.datetime.fromtimestamp(record.created)
        level = "F" if record.levelno >= logging.CRITICAL else record.levelname[0]
        prefix = (f"{level}{when:%m%d %H:%M:%S.%f} {os.getpid():5d} "
                  f"{os.path.basename(record.pathname)}:{record.lineno}] ")
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        return prefix + message


class _GlogHandler(logging.StreamHandler):
    """The handler init_log installs, so that a second call replaces it."""


def init_log(level: int = logging.INFO, stream: TextIO | None = None) -> logging.Logger:
    """Sends the `caffe` loggers to stderr (or stream) in glog format; returns the root caffe logger."""
    logger = logging.getLogger(ROOT_LOGGER)
    for handler in list(logger.handlers):
        if isinstance(handler, _GlogHandler):
            logger.removeHandler(handler)
    handler = _GlogHandler(stream or sys.stderr)
    handler.setFormatter(GlogFormatter())
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    return logger
