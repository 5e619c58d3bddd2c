"""The package's long description (its page on a package index, a wheel's METADATA): README.md,
with its relative links made text.

Everything else is in pyproject.toml. README.md links to docs/ and CONTRIBUTING.md by relative
links, which resolve in a checkout and on a repository host but nowhere on an index's page (PyPI
resolves no relative link), and the project has no public URL yet to make them absolute. A wheel
carries no docs/: the sdist does (MANIFEST.in), so on the page each link reads as its text and the
file of the source distribution it names: "failure reports (docs/failure-reports.md in the source
distribution)". CONTRIBUTING.md, "A release", says what changes once there is a public URL.
"""

from __future__ import annotations

import re
from pathlib import Path

from setuptools import setup

# [text](target) where target is neither absolute nor an anchor on the page itself.
RELATIVE_LINK = re.compile(r"\[(?P<text>[^\]\n]+)\]\((?!https?://|mailto:|#)(?P<target>[^)\s]+)\)")


def long_description(readme: str) -> str:
    def text(link: re.Match[str]) -> str:
        shown, target = link["text"], link["target"]
        where = f"{target.split('#')[0]} in the source distribution"
        return f"{shown} ({where})" if shown.strip("`") != target else f"{shown} (in the source distribution)"

    return RELATIVE_LINK.sub(text, readme)


if __name__ == "__main__":
    readme = (Path(__file__).resolve().parent / "README.md").read_text(encoding="utf-8")
    setup(long_description=long_description(readme), long_description_content_type="text/markdown")
