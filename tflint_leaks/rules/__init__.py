"""The rules, one module per rule (``tfl101_python_scalar_argument.py``), plus the helpers a few
rules share (``_calls``, ``_models``, ``_tapes``, ``_traced``). Rules are listed, and loaded on
demand, by :mod:`tflint_leaks.registry`; nothing here imports them."""
