"""The Triton runner's pure parts (src/gpu/runner_py/runner_protocol.py): the message channel,
tensor descriptions, the wrappers handed to torch, the entry's arity, error summaries, the sandbox
policy extension and the kernel cache listing. Standard library only: no torch, no GPU."""

import ctypes
import json
import os
import socket
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "gpu", "runner_py"))
import runner_protocol as rp  # noqa: E402


def tensor_json(**over):
    j = {"name": "A", "handle": "ab" * 64, "offset": 2 << 20, "bytes": 8 * 4 * 2, "dtype": "bfloat16",
         "shape": [8, 4], "output": False}
    j.update(over)
    return j


class ChannelTest(unittest.TestCase):
    def test_round_trip_over_seqpacket(self):
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ca, cb = rp.Channel(a), rp.Channel(b)
        ca.send({"type": "hello", "token": "t", "pid": 7})
        ca.send({"type": "done", "kernels": ["k" * 1000] * 100})
        self.assertEqual(cb.receive(), {"type": "hello", "token": "t", "pid": 7})  # message boundaries kept
        self.assertEqual(len(cb.receive()["kernels"]), 100)
        a.close()
        self.assertIsNone(cb.receive())  # the peer went away
        b.close()

    def test_refuses_non_object_and_oversize(self):
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        a.send(b"[1,2]")
        with self.assertRaises(rp.ProtocolError):
            rp.Channel(b).receive()
        with self.assertRaises(rp.ProtocolError):
            rp.Channel(a).send({"x": "y" * (rp.MAX_MESSAGE + 1)})
        a.close()
        b.close()


class ArgsTest(unittest.TestCase):
    def test_connect_and_token(self):
        self.assertEqual(rp.parse_args(["--connect", "/s", "--token", "abc"]),
                         {"connect": "/s", "token": "abc", "diagnose": False, "sync_fd": -1})
        self.assertTrue(rp.parse_args(["--diagnose"])["diagnose"])
        for bad in ([], ["--token", "x"], ["--connect"], ["--what", "x"], ["--connect", "/s", "--sync-fd", "x"],
                    ["--connect", "/s", "--sync-fd", "-3"], ["--connect", "/s", "--sync-fd"]):
            with self.assertRaises(rp.ProtocolError, msg=bad):
                rp.parse_args(bad)


    def test_the_harness_shared_page_descriptor(self):
        # ptxbench-harness passes --sync-fd to every runner it starts without a wrapper tool.
        args = rp.parse_args(["--connect", "/s", "--token", "abc", "--sync-fd", "5"])
        self.assertEqual(args["sync_fd"], 5)
        self.assertEqual(args["connect"], "/s")


class TensorDescTest(unittest.TestCase):
    def test_reads_the_harness_description(self):
        d = rp.TensorDesc.from_json(tensor_json())
        self.assertEqual((d.name, d.offset, d.bytes, d.dtype, d.shape, d.is_output), ("A", 2 << 20, 64, "bfloat16", [8, 4], False))
        self.assertEqual(d.numel(), 32)

    def test_rejects_what_it_cannot_map(self):
        for over, why in [({"bytes": 63}, "do not hold"), ({"dtype": "float4_e2m1"}, "not supported"),
                          ({"handle": "xy" * 64}, "handle"), ({"handle": "ab"}, "handle"), ({"offset": -1}, "negative"),
                          ({"shape": [8, "x"]}, "malformed")]:
            with self.assertRaises(rp.ProtocolError) as e:
                rp.TensorDesc.from_json(tensor_json(**over))
            self.assertIn(why, str(e.exception))
        j = tensor_json()
        del j["output"]
        with self.assertRaises(rp.ProtocolError):
            rp.TensorDesc.from_json(j)

    def test_every_dtype_has_a_same_size_carrier(self):
        sizes = {"f4": 32, "f2": 16, "i2": 16, "u1": 8, "i8": 64, "i4": 32, "i1": 8, "b1": 8}
        for name, (torch_name, bits, typestr) in rp.DTYPES.items():
            self.assertEqual(sizes[typestr[1:]], bits, name)
            self.assertTrue(hasattr(types, "SimpleNamespace") and torch_name)

    def test_cuda_array_interface(self):
        cai = rp.CudaArray(0x7F0000000000, [4, 8], "bfloat16").__cuda_array_interface__
        self.assertEqual(cai, {"shape": (4, 8), "typestr": "<i2", "data": (0x7F0000000000, False), "version": 2,
                               "strides": None})
        self.assertEqual(rp.contiguous_strides([2, 3, 4]), [12, 4, 1])
        self.assertEqual(rp.contiguous_strides([]), [])


class DlpackTest(unittest.TestCase):
    def test_capsule_points_at_a_dltensor_of_the_buffer(self):
        capsule = rp.dlpack_capsule(0x7F0000001000, [4, 8], "bfloat16", 1)
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        self.assertEqual(get_name(capsule), b"dltensor")
        managed_type, _ = rp._dlpack_types()
        m = managed_type.from_address(get_pointer(capsule, b"dltensor"))
        t = m.dl_tensor
        self.assertEqual((t.data, t.device.device_type, t.device.device_id, t.ndim), (0x7F0000001000, 2, 1, 2))
        self.assertEqual((t.dtype.code, t.dtype.bits, t.dtype.lanes), (4, 16, 1))
        self.assertEqual([t.shape[0], t.shape[1]], [4, 8])
        self.assertEqual([t.strides[0], t.strides[1]], [8, 1])
        # The consumer's deleter releases what the capsule points into.
        alive = len(rp._DLPACK_ALIVE)
        m.deleter(ctypes.addressof(m))
        self.assertEqual(len(rp._DLPACK_ALIVE), alive - 1)

    def test_no_capsule_for_float8(self):
        with self.assertRaises(rp.ProtocolError):
            rp.dlpack_capsule(1, [1], "float8_e4m3fn", 0)


class EntryTest(unittest.TestCase):
    def test_arity(self):
        def run3(A, B, C):
            pass

        def run_default(A, B, C, D=None):
            pass

        def run_var(*tensors):
            pass

        def run_kwonly(A, B, C, *, scale):
            pass

        self.assertIsNone(rp.entry_arity_problem(run3, 3))
        self.assertIn("takes 3 positional parameters, but the task has 2", rp.entry_arity_problem(run3, 2))
        self.assertIn("takes 3 positional", rp.entry_arity_problem(run3, 4))
        self.assertIsNone(rp.entry_arity_problem(run_default, 3))
        self.assertIsNone(rp.entry_arity_problem(run_default, 4))
        self.assertIn("3 to 4", rp.entry_arity_problem(run_default, 5))
        self.assertIsNone(rp.entry_arity_problem(run_var, 5))
        self.assertIn("keyword-only", rp.entry_arity_problem(run_kwonly, 3))

    def test_exception_summary_names_the_candidates_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "kernel.py")
            with open(path, "w") as f:
                f.write("def helper():\n    raise ValueError('A must be\\ncontiguous')\n\ndef run():\n    helper()\n")
            namespace = {}
            with open(path) as f:
                exec(compile(f.read(), path, "exec"), namespace)
            try:
                namespace["run"]()
            except ValueError as e:
                self.assertEqual(rp.exception_summary(e, path), "ValueError: A must be | contiguous (kernel.py:2)")
                text = rp.traceback_text(e, path)
                self.assertIn("kernel.py", text)
                self.assertIn("ValueError: A must be", text)
        self.assertEqual(rp.exception_summary(KeyError(), "/nowhere.py"), "KeyError")
        self.assertTrue(rp.exception_summary(RuntimeError("x" * 5000), "").endswith("..."))

    def test_compile_errors_by_class_not_text(self):
        errors = types.ModuleType("triton.compiler.errors")
        exec("class CompilationError(Exception): pass\nclass Other(Exception): pass", errors.__dict__)
        errors.CompilationError.__module__ = errors.Other.__module__ = "triton.compiler.errors"

        class Derived(errors.CompilationError):
            pass

        class PTXASError(RuntimeError):
            pass
        PTXASError.__module__ = "triton.runtime.errors"
        self.assertTrue(rp.is_compile_error(errors.CompilationError("x")))
        self.assertTrue(rp.is_compile_error(Derived("x")))
        self.assertTrue(rp.is_compile_error(PTXASError("ptxas failed")))
        self.assertFalse(rp.is_compile_error(errors.Other("CompilationError")))
        self.assertFalse(rp.is_compile_error(RuntimeError("CompilationError: ptxas")))


class PolicyTest(unittest.TestCase):
    def test_adds_read_paths_only(self):
        policy = {"scratch_dir": "/s", "read_paths": ["/usr"], "mode": "enforce"}
        out = rp.extend_policy(policy, ["/usr", "/opt/venv"])
        self.assertEqual(out["read_paths"], ["/usr", "/opt/venv"])
        self.assertEqual(out["scratch_dir"], "/s")
        self.assertEqual(policy["read_paths"], ["/usr"])  # the harness's copy is untouched
        self.assertIsNone(rp.extend_policy(None, ["/x"]))
        with self.assertRaises(rp.ProtocolError):
            rp.extend_policy([1], [])

    def test_python_paths_are_absolute_existing_and_unique(self):
        paths = rp.python_read_paths([os])
        self.assertTrue(paths)
        self.assertEqual(len(paths), len(set(paths)))
        for p in paths:
            self.assertTrue(os.path.isabs(p) and os.path.exists(p), p)
        self.assertIn(os.path.realpath(os.path.dirname(os.__file__)), paths)


class CacheTest(unittest.TestCase):
    def test_lists_names_with_a_cubin(self):
        with tempfile.TemporaryDirectory() as cache:
            def put(key, name, meta, cubin=True):
                os.makedirs(os.path.join(cache, key), exist_ok=True)
                with open(os.path.join(cache, key, name + ".json"), "w") as f:
                    f.write(meta if isinstance(meta, str) else json.dumps(meta))
                if cubin:
                    open(os.path.join(cache, key, name + ".cubin"), "wb").close()
            put("K1", "gemm_kernel", {"name": "gemm_kernel", "num_warps": 8})
            put("K2", "gemm_kernel", {"name": "gemm_kernel"})        # another specialisation
            put("K3", "attn_fwd", {"name": "attn_fwd"})
            put("K3", "__grp__attn_fwd", {"child_paths": {}})
            put("K4", "no_binary", {"name": "no_binary"}, cubin=False)
            put("K5", "broken", "{not json")
            put("K6", "unnamed", {"num_warps": 4})
            os.makedirs(os.path.join(cache, "K7"))
            with open(os.path.join(cache, "K7", "cuda_utils.so"), "wb"):
                pass
            self.assertEqual(rp.compiled_kernels(cache), ["gemm_kernel", "attn_fwd"])
        self.assertEqual(rp.compiled_kernels("/nonexistent/cache"), [])


class EnvironmentTest(unittest.TestCase):
    def test_triton_environment(self):
        to_set, to_unset = rp.triton_environment("/scratch", "/usr/lib/x86_64-linux-gnu")
        self.assertEqual(to_set["TRITON_CACHE_DIR"], "/scratch/triton-driver")
        self.assertEqual(to_set["TRITON_HOME"], "/scratch/triton-home")
        self.assertEqual(to_set["TRITON_LIBCUDA_PATH"], "/usr/lib/x86_64-linux-gnu")
        for k in ("TRITON_INTERPRET", "TRITON_REMOTE_CACHE_BACKEND", "TRITON_OVERRIDE_DIR"):
            self.assertIn(k, to_unset)
        self.assertNotIn("TRITON_LIBCUDA_PATH", rp.triton_environment("/s")[0])

    def test_libcuda_from_maps(self):
        maps = ("7f00-7f01 r--p 0 08:01 1 /usr/lib/libc.so.6\n"
                "7f02-7f03 r-xp 0 08:01 2 /usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06\n"
                "7f04-7f05 rw-p 0 00:00 0 \n")
        self.assertEqual(rp.libcuda_dir_from_maps(maps), "/usr/lib/x86_64-linux-gnu")
        self.assertIsNone(rp.libcuda_dir_from_maps("7f00-7f01 r--p 0 08:01 1 /usr/lib/libc.so.6\n"))


if __name__ == "__main__":
    unittest.main()
