"""roastop's Python side: roastcoffea's API, sending each chunk's record to a
running roastop over UDP instead of collecting it in the client.

Switching from roastcoffea is one import::

    from roastop import MetricsCollector, track_metrics, track_time, track_memory, track_bytes
"""
from roastop.collector import MetricsCollector
from roastop.decorator import track_metrics
from roastop.fetch import MetricsUnavailable
from roastop.instrumentation import track_bytes, track_memory, track_time

__version__ = "0.1.0"

__all__ = ["MetricsCollector", "track_metrics", "track_time", "track_memory", "track_bytes",
           "MetricsUnavailable", "__version__"]
