"""Every helper call the runner makes exists on Helper, checked on the source without a GPU: the
runner reaches the C helper only as self.lib.<name>(...) (self.lib is a Helper), and a name Helper
lacks fails only on the GPU host, at the first call that uses it (an H100 run ended every Triton
candidate with "'Helper' object has no attribute 'reset_persisting_l2'")."""

import ast
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.realpath(os.path.join(HERE, "..", "..", "src", "gpu", "runner_py", "ptxbench_triton_runner.py"))


def class_node(tree, name):
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)


def helper_calls(cls):
    """The names called as self.lib.<name>(...) inside the class."""
    names = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if (isinstance(owner, ast.Attribute) and owner.attr == "lib" and isinstance(owner.value, ast.Name)
                    and owner.value.id == "self"):
                names.add(node.func.attr)
    return names


class HelperSurfaceTest(unittest.TestCase):
    def test_every_helper_call_of_the_runner_is_a_helper_method(self):
        tree = ast.parse(open(RUNNER).read())
        helper = class_node(tree, "Helper")
        methods = {n.name for n in helper.body if isinstance(n, ast.FunctionDef)}
        used = helper_calls(class_node(tree, "Runner"))
        self.assertTrue(used, "the runner makes no self.lib calls: the check would prove nothing")
        self.assertEqual(sorted(used - methods), [], "self.lib calls of Runner that Helper does not define")

    def test_every_helper_method_calls_a_declared_c_function(self):
        source = open(RUNNER).read()
        tree = ast.parse(source)
        helper = class_node(tree, "Helper")
        declared = {k.value for n in ast.walk(helper) if isinstance(n, ast.Dict)
                    for k in n.keys if isinstance(k, ast.Constant) and str(k.value).startswith("ptxbench_rp_")}
        called = {n.attr for n in ast.walk(helper) if isinstance(n, ast.Attribute) and n.attr.startswith("ptxbench_rp_")}
        self.assertTrue(called)
        self.assertEqual(sorted(called - declared), [], "C functions called without a declared signature")


if __name__ == "__main__":
    unittest.main()
