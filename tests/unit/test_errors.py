"""Every exception lives in errors.py, under one base class, and is exported."""

from __future__ import annotations

import inspect

import pytest_kernelprof
from pytest_kernelprof import KernelProfError, errors


def test_every_error_is_a_kernelprof_error_exported_from_the_package() -> None:
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if c.__module__ == errors.__name__]
    assert len(classes) > 10
    for cls in classes:
        assert issubclass(cls, KernelProfError), cls
        assert getattr(pytest_kernelprof, cls.__name__, None) is cls, f"{cls.__name__} is not exported"
        assert cls.__name__ in pytest_kernelprof.__all__


def test_no_module_defines_its_own_exception() -> None:
    import pkgutil

    for info in pkgutil.iter_modules(pytest_kernelprof.__path__):
        if info.name == "__main__":  # runs the command line when imported
            continue
        module = __import__(f"pytest_kernelprof.{info.name}", fromlist=["_"])
        own = [
            name
            for name, cls in inspect.getmembers(module, inspect.isclass)
            if issubclass(cls, BaseException) and cls.__module__ == module.__name__ and module is not errors
        ]
        assert not own, f"{info.name} defines {own}: exceptions belong in errors.py"
