"""The shared go/done page through the real helper library (runner_py_capi.cc over
core/sync_channel.h), without a GPU: a page laid out as the harness makes it (a memfd of one page,
the magic at 0, go at 64, done at 192) is attached, go is read from it and done written to it. A
descriptor that is not a page is refused with the reason. Skipped (visibly) where the helper
library was not built: PTXBENCH_RUNNER_PY_LIB names it (tests/runner_py/CMakeLists.txt)."""

import mmap
import os
import struct
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.realpath(os.path.join(HERE, "..", "..", "src", "gpu", "runner_py")))
LIB = os.environ.get("PTXBENCH_RUNNER_PY_LIB", "")
MAGIC = 0x31636e7973627870  # "pxbsync1", core/sync_channel.cc
GO, DONE = 64, 192


def make_page(magic=MAGIC):
    fd = os.memfd_create("ptxbench-sync-test")
    os.ftruncate(fd, mmap.PAGESIZE)
    page = mmap.mmap(fd, mmap.PAGESIZE)
    page[0:8] = struct.pack("<Q", magic)
    return fd, page


def word(page, offset):
    return struct.unpack_from("<I", page, offset)[0]


@unittest.skipUnless(LIB and os.path.isfile(LIB), "libptxbench_runner_py.so not built (PTXBENCH_RUNNER_PY_LIB unset)")
class HelperSyncTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import ptxbench_triton_runner as runner_module
        cls.helper = runner_module.Helper(LIB)  # also checks the C ABI version against the runner's

    def test_go_is_read_from_and_done_written_to_the_page(self):
        fd, page = make_page()
        a, b = os.pipe()  # liveness: stays open, like the socket to a live harness
        try:
            self.helper.sync_attach(os.dup(fd))  # the library owns what it attaches
            struct.pack_into("<I", page, GO, 41)
            self.assertEqual(self.helper.sync_wait_go(41, a), 0)
            # Waiting for a later go: released when the "harness" writes it from another thread.
            writer = threading.Timer(0.2, lambda: struct.pack_into("<I", page, GO, 42))
            writer.start()
            t0 = time.monotonic()
            self.assertEqual(self.helper.sync_wait_go(42, a), 0)
            self.assertGreaterEqual(time.monotonic() - t0, 0.15)
            writer.join()
            self.assertEqual(word(page, DONE), 0)
            self.helper.sync_signal_done(42)
            self.assertEqual(word(page, DONE), 42)
        finally:
            os.close(a)
            os.close(b)
            page.close()
            os.close(fd)

    def test_a_waiting_runner_returns_when_the_harness_hangs_up(self):
        fd, page = make_page()
        a, b = os.pipe()
        try:
            self.helper.sync_attach(os.dup(fd))  # the library owns what it attaches
            threading.Timer(0.2, lambda: os.close(b)).start()  # the harness's end goes away
            self.assertEqual(self.helper.sync_wait_go(7, a), 2)
        finally:
            os.close(a)
            page.close()
            os.close(fd)

    def test_a_descriptor_that_is_not_a_sync_page_is_refused(self):
        fd, page = make_page(magic=0x1234)
        try:
            with self.assertRaisesRegex(RuntimeError, "not a sync page"):
                self.helper.sync_attach(os.dup(fd))  # the library owns what it attaches
        finally:
            page.close()
            os.close(fd)
        r, w = os.pipe()
        try:
            with self.assertRaises(RuntimeError):
                self.helper.sync_attach(os.dup(r))
        finally:
            os.close(r)
            os.close(w)


if __name__ == "__main__":
    unittest.main()
