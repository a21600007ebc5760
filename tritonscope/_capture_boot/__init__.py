"""Holds the sitecustomize.py that `tritonscope capture` puts first on the program's PYTHONPATH."""
