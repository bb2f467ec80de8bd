#!/usr/bin/env python3
"""scripts/update_teaching.py: how it reads the teaching markers and trims outputs."""
import importlib.util
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "update_teaching", os.path.join(HERE, "..", "..", "scripts", "update_teaching.py"))
ut = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ut)

OUTPUT = """\
============================== First ==============================
a1
a2
a3

============================== Second ==============================
b1
b2
b3
b4
b5
"""


class Trim(unittest.TestCase):
    def test_keeps_the_named_sections_in_output_order(self):
        spec = ut.parse_spec("sections: Second | First\n")
        self.assertEqual(ut.trim(OUTPUT, spec), OUTPUT)
        spec = ut.parse_spec("sections: Second\n")
        self.assertEqual(ut.trim(OUTPUT, spec), OUTPUT[OUTPUT.index("=====" * 6 + " Second"):])

    def test_head_and_tail_per_section(self):
        spec = ut.parse_spec("head: Second = 2\ntail: Second = 1\n")
        self.assertEqual(ut.trim(OUTPUT, spec), OUTPUT[:OUTPUT.index("b1")] + "b1\n[... 3 more lines]\nb5\n")
        # Every section: the banner and two lines; a single line is never elided.
        spec = ut.parse_spec("head: 3\n")
        self.assertEqual(ut.trim(OUTPUT, spec), OUTPUT[:OUTPUT.index("b3")] + "[... 3 more lines]\n")

    def test_rejects_unknown_keys(self):
        with self.assertRaises(ValueError):
            ut.parse_spec("expected: x\n")

    def test_facts_and_expectations_are_collected(self):
        spec = ut.parse_spec("fact: 924,844,032\nfact: 8.409\nexpect: a  b\nexpect-re: ^x\\s+y$\n")
        self.assertEqual(spec["fact"], ["924,844,032", "8.409"])
        self.assertEqual(spec["expect"], ["a  b"])
        self.assertEqual(spec["expect-re"], ["^x\\s+y$"])
        self.assertEqual(ut.squash("a   b\tc"), "a b c")

    def test_prose_leaves_out_blocks_and_comments(self):
        doc = "Says 1,024.\n<!-- teaching\nfact: 7\n-->\n```console\n$ cmd\n7 and 9\n```\nThen 9.\n"
        self.assertEqual(ut.prose_of(doc), "Says 1,024.\n\n\nThen 9.\n")

    def test_blocks_are_found(self):
        doc = "x\n<!-- teaching\nhead: 2\n-->\n```console\n$ build/bench/engine_bench --a \"b c\"\nold\n```\ny\n"
        blocks = list(ut.MARKER.finditer(doc))
        self.assertEqual(len(blocks), 1)
        self.assertEqual(blocks[0].group("command"), 'build/bench/engine_bench --a "b c"')
        self.assertEqual(blocks[0].group("output"), "old\n")


if __name__ == "__main__":
    unittest.main()
