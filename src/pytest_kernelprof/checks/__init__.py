"""What a profile is checked against: suite-wide rules (``rules.py``) over a profile's numbers
(``metrics.py``), stored baselines (``baseline/``), and kernel-sequence diffs (``diff.py``)."""
