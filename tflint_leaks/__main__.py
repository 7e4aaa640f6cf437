from tflint_leaks.cli import entry_point

entry_point()
