"""tflint-leaks: find TensorFlow memory-leak and retracing patterns statically."""

from tflint_leaks.diagnostics import Diagnostic, Edit, Fix, Location, Related, Severity

__version__ = "0.1.0"

__all__ = [
    "Diagnostic",
    "Edit",
    "Fix",
    "Location",
    "Related",
    "Severity",
    "__version__",
]
