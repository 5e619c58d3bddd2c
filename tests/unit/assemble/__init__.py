"""Tests of ``src/pytest_kernelprof/build/``: pytest does not collect folders named ``build``."""
