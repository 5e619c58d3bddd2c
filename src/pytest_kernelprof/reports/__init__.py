"""The CI outputs, rendered from profiles and test outcomes: the Markdown job summary
(``summary.py``), GitHub annotations (``annotations.py``), JUnit properties (``junit.py``) and the
HTML timeline page (``timeline.py``). Plain modules: the hooks that write them are ``plugin/ci.py``'s."""
