"""SummaryWriter: events (a scalar, a text, a histogram at a step) appended to a TensorBoard event file,
with tensorboard's own file writer and protocol buffers, so TensorBoard reads what is written here."""
from __future__ import annotations

import datetime
import os
import socket
import time

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from tinygrad_like.torch._refuse import NotInEngine

__all__ = ["SummaryWriter"]


def _number(value) -> float:
    """A Python number from a number, a numpy scalar or a one-element Tensor."""
    value = value.item() if hasattr(value, "item") else value
    return float(value)


def _histogram(values, bins: int = 30) -> HistogramProto:
    values = np.asarray(values.numpy() if hasattr(values, "numpy") else values, dtype=np.float64).ravel()
    if values.size == 0 or not np.isfinite(values).all():
        raise ValueError(f"add_histogram: needs finite values, got {values.size} values "
                         f"({(~np.isfinite(values)).sum()} not finite)")
    counts, edges = np.histogram(values, bins=bins)
    return HistogramProto(min=values.min(), max=values.max(), num=values.size, sum=values.sum(),
                          sum_squares=(values * values).sum(), bucket_limit=edges[1:].tolist(),
                          bucket=counts.astype(float).tolist())


class SummaryWriter:
    """Events for TensorBoard in log_dir (default runs/<date>_<host><comment>), as PyTorch's SummaryWriter."""

    def __init__(self, log_dir: str | None = None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = ""):
        if log_dir is None:
            stamp = datetime.datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        os.makedirs(log_dir, exist_ok=True)
        self.log_dir, self._max_queue, self._flush_secs = str(log_dir), max_queue, flush_secs
        self._filename_suffix = filename_suffix
        self._writer = EventFileWriter(self.log_dir, max_queue, flush_secs, filename_suffix)
        self._scalar_writers: dict[str, EventFileWriter] = {}

    def get_logdir(self) -> str:
        return self.log_dir

    def _add(self, value: Summary.Value, step, walltime, writer: EventFileWriter | None = None) -> None:
        event = Event(wall_time=time.time() if walltime is None else walltime, summary=Summary(value=[value]))
        if step is not None:
            event.step = int(step)
        (writer or self._writer).add_event(event)

    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """One number at a step: a point of the curve `tag`."""
        self._add(Summary.Value(tag=tag, simple_value=_number(scalar_value)), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None, walltime=None) -> None:
        """Several curves on one chart: each tag is written to the run log_dir/<main_tag>_<tag>, tagged main_tag."""
        for tag, value in tag_scalar_dict.items():
            folder = os.path.join(self.log_dir, f"{main_tag.replace('/', '_')}_{tag}")
            if folder not in self._scalar_writers:
                os.makedirs(folder, exist_ok=True)
                self._scalar_writers[folder] = EventFileWriter(folder, self._max_queue, self._flush_secs,
                                                               self._filename_suffix)
            self._add(Summary.Value(tag=main_tag, simple_value=_number(value)), global_step, walltime,
                      self._scalar_writers[folder])

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        """A text (markdown) at a step, shown in TensorBoard's text tab."""
        metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
        tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode()],
                             tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
        self._add(Summary.Value(tag=tag + "/text_summary", metadata=metadata, tensor=tensor), global_step, walltime)

    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None) -> None:
        """The distribution of `values` (a tensor or array) at a step, in 30 equal-width buckets."""
        self._add(Summary.Value(tag=tag, histo=_histogram(values)), global_step, walltime)

    def flush(self) -> None:
        for writer in (self._writer, *self._scalar_writers.values()):
            writer.flush()

    def close(self) -> None:
        for writer in (self._writer, *self._scalar_writers.values()):
            writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getattr__(self, name: str):
        if name.startswith("add_"):
            raise NotInEngine(f"tinygrad_like.torch has no SummaryWriter.{name}: this writer writes scalars, "
                              "texts and histograms")
        raise AttributeError(f"'SummaryWriter' object has no attribute '{name}'")
