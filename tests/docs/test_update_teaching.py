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

    def test_ranges_bound_each_captured_number(self):
        spec = ut.parse_spec("range: ^peak\\s+([\\d,]+)\\s+([\\d.]+) => 9,633,792..13,000,000; 1.6..1.7\n")
        self.assertEqual(spec["range"], [("^peak\\s+([\\d,]+)\\s+([\\d.]+)", [(9633792, 13e6), (1.6, 1.7)])])
        self.assertEqual(ut.range_problems("peak 12,767,296 1.630\n", spec), [])
        self.assertEqual(ut.range_problems("peak 13,767,296 1.630\n", spec),
                         ["/^peak\\s+([\\d,]+)\\s+([\\d.]+)/: 13,767,296 is outside 9,633,792..13,000,000"])
        self.assertEqual(len(ut.range_problems("peak 12,767,296 1.71\n", spec)), 1)
        self.assertEqual(ut.range_problems("other\n", spec), ["/^peak\\s+([\\d,]+)\\s+([\\d.]+)/ does not match the output"])
        # One range per group.
        with self.assertRaises(ValueError):
            ut.parse_spec("range: ^peak ([\\d,]+) ([\\d,]+) => 1..2\n")
        with self.assertRaises(ValueError):
            ut.parse_spec("range: ^peak ([\\d,]+) 1..2\n")

    def test_isa_facts_are_checked_under_their_instruction_set(self):
        spec = ut.parse_spec("isa-fact: avx2 3,133,504\nisa-fact: avx512 2,359,360\nisa-fact: scalar 3,145,792\n")
        outputs = {"avx2": (0, "conv:workspace 3,133,504\n", ""),
                   "avx512": (1, "", "engine_bench: MINFER_ISA=avx512: this CPU cannot run it (runnable: scalar, avx2)\n"),
                   "scalar": (0, "conv:workspace 9\n", "")}
        run = ut.run
        ut.run = lambda command, bin_dir, isa=None: outputs[isa]
        try:
            problems, notes = ut.isa_fact_problems("cmd", spec, "bin", "3,133,504 or 2,359,360")
        finally:
            ut.run = run
        self.assertEqual(problems, ["fact '3,145,792' is not in the output with MINFER_ISA=scalar",
                                    "fact '3,145,792' (scalar) is not stated in the text"])
        self.assertEqual(notes, ["  isa-fact avx512: skipped, engine_bench: MINFER_ISA=avx512: this CPU cannot run it "
                                 "(runnable: scalar, avx2)"])

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
