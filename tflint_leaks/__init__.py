"""tflint-leaks: find TensorFlow memory-leak and retracing patterns statically."""

from tflint_leaks.diagnostics import Diagnostic, Edit, Fix, Location, Related, Severity

__version__ = "0.1.0"
#: Where the rule docs live; every finding's ``url`` points below it.
DOCS_URL = "https://github.com/tflint-leaks/tflint-leaks/blob/main/docs"

__all__ = [
    "DOCS_URL",
    "Diagnostic",
    "Edit",
    "Fix",
    "Location",
    "Related",
    "Severity",
    "__version__",
]
