"""The plugin's own hooks, for a ``conftest.py`` or another plugin to implement (as
pytest-benchmark's ``pytest_benchmark_*`` hooks are); ``hooks.py``'s ``pytest_addhooks``
registers them. docs/ci.md shows them in use.

pytest finds these specifications by their names; their bodies are never run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ..model import KernelProfile


@pytest.hookspec
def pytest_kernelprof_junit_properties(item: pytest.Item, profile: KernelProfile) -> list[tuple[str, object]]:
    """Extra JUnit XML properties for one profile a test took: ``(name, value)`` pairs, written
    after the plugin's own ``kernelprof.*`` figures (run with ``--junitxml``).

    Called once per profile of the test's call phase, in the order the test took them, where the
    test ran (an xdist worker, or the one process). ``item.user_properties`` already holds the
    plugin's figures of every profile; the pairs returned (a list, or any iterable of pairs) are
    added as ``record_property`` adds them, each name as its ``str()``, each value as it is where
    it is an ``int``, ``float`` or ``bool`` and as its ``str()`` otherwise, within the bounds of
    ``reports/junit.py`` (an iterator is read no further than them). An implementation that raises,
    returns what is not pairs, or a name or value whose ``str()`` raises, adds nothing: the
    plugin's own properties and the other implementations' are still written, and the terminal
    says which hook of which plugin or ``conftest.py`` failed, and how.
    """
    raise NotImplementedError


@pytest.hookspec
def pytest_kernelprof_summary(config: pytest.Config, exitstatus: int) -> list[str]:
    """Extra Markdown lines for the end of the job summary (``$GITHUB_STEP_SUMMARY`` or
    ``--kernelprof-summary``), after the plugin's own parts.

    Called once, at the end of the session, in the process that writes the summary (the xdist
    controller: implement it in a plugin or in a ``conftest.py`` the controller loads, such as
    the one at the root of the tests). Where the plugin has nothing to say and the
    implementations return lines, the summary holds its title and those lines. A ``str``
    returned is taken as its lines (Markdown text), None as none. An implementation that raises,
    or returns what is not lines, adds nothing: the summary is still written, and the terminal
    says which hook of which plugin or ``conftest.py`` failed, and how.
    """
    raise NotImplementedError
