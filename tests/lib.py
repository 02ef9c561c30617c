# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the Python that shell tests run; tests/lib.sh puts this
# directory on PYTHONPATH, so "from lib import err" works in any of them.


def err(f, *a, **k):
    """The errno f(*a, **k) fails with, 0 if it succeeds."""
    try:
        f(*a, **k)
    except OSError as e:
        return e.errno
    return 0
