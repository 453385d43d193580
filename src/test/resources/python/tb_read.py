"""Reads a TensorBoard log folder with TensorBoard's own loader and prints what it found as JSON.

Used by TensorBoardInteropTest: EventAccumulator is what `tensorboard --logdir` runs, and its record reader checks
both masked CRC-32C of every record, so a framing or protobuf mistake in ding4j's writer shows up here.
"""
import json
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0, "histograms": 0})
acc.Reload()
tags = acc.Tags()
out = {
    "scalars": {t: [[e.step, e.value] for e in acc.Scalars(t)] for t in tags["scalars"]},
    "histograms": {
        t: [
            {
                "step": e.step,
                "min": e.histogram_value.min,
                "max": e.histogram_value.max,
                "num": e.histogram_value.num,
                "sum": e.histogram_value.sum,
                "sum_squares": e.histogram_value.sum_squares,
                "bucket_limit": list(e.histogram_value.bucket_limit),
                "bucket": list(e.histogram_value.bucket),
            }
            for e in acc.Histograms(t)
        ]
        for t in tags["histograms"]
    },
}
print(json.dumps(out))
