# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the Python that shell tests run; tests/lib.sh puts this
# directory on PYTHONPATH, so "from lib import err" works in any of them.

import os


def err(f, *a, **k):
    """The errno f(*a, **k) fails with, 0 if it succeeds."""
    try:
        f(*a, **k)
    except OSError as e:
        return e.errno
    return 0


def exec_without_io_uring(argv, errno_):
    """Exec argv with io_uring_setup(2) failing with errno_ (seccomp),
    as where the kernel or a sandbox refuses io_uring."""
    import ctypes
    import struct
    # io_uring_setup is 425 on every architecture of the unified table.
    nr = 425
    prog = [
        (0x20, 0, 0, 0),                        # ld [0]: the syscall number
        (0x15, 0, 1, nr),                       # jeq nr, else skip one
        (0x06, 0, 0, 0x00050000 | errno_),      # ret ERRNO(errno_)
        (0x06, 0, 0, 0x7fff0000),               # ret ALLOW
    ]
    code = b"".join(struct.pack("HBBI", *i) for i in prog)
    buf = ctypes.create_string_buffer(code)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    fprog = SockFprog(len(prog), ctypes.addressof(buf))
    # PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP with SECCOMP_MODE_FILTER.
    if libc.prctl(38, 1, 0, 0, 0) != 0 or \
            libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")
    os.execvp(argv[0], argv)
