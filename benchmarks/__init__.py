"""Benchmarks: run each as a module from the repository root, e.g. `python -m benchmarks.text` (a
script run as a file would put this folder first on sys.path, where `ast.py` shadows the
standard library)."""
