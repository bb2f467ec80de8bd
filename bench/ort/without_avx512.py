#!/usr/bin/env python3
"""Copies bench/ort into DEST with an onnxruntime-node that takes its AVX2 kernels on an AVX-512 CPU.

    /usr/bin/python3 bench/ort/without_avx512.py /tmp/ort_avx2
    MINFER_ISA=avx2 /usr/bin/python3 bench/compare_ort.py --ort_dir /tmp/ort_avx2 ...

Issue 14 asks for both engines' AVX2 paths against each other; on a machine with AVX-512
minfer takes its AVX2 kernels under MINFER_ISA=avx2, and this copy makes ONNX Runtime take
its own. ONNX Runtime (MLAS and cpuinfo) enables AVX-512 kernels only where XGETBV says
the OS saves the AVX-512 register state (XCR0 bits 5-7), as an OS that leaves AVX-512 off
would say. Each XGETBV in the copy's libonnxruntime.so becomes `mov al, 7; nop`: XCR0 reads
as x87 + SSE + AVX state (bits 0-2) and nothing above them in the low byte, so the AVX2
(and FMA) paths stay and the AVX-512 ones do not. The instructions are found with objdump
(binutils) in the executable sections; the copy keeps the original's other bytes, and the
original in bench/ort is not touched. This is the AVX2 path on this CPU, not an AVX2-only
CPU: tables made with it say so.
"""
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
XGETBV = bytes([0x0F, 0x01, 0xD0])
MOV_AL_7_NOP = bytes([0xB0, 0x07, 0x90])


def sections(lib):
    """[(vma, size, file offset)] of the library's sections, from objdump -h."""
    out = subprocess.run(["objdump", "-h", lib], check=True, capture_output=True, text=True).stdout
    rows = re.findall(r"^\s*\d+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", out, re.M)
    return [(int(vma, 16), int(size, 16), int(offset, 16)) for size, vma, offset in rows]


def xgetbv_offsets(lib):
    """File offsets of every XGETBV instruction objdump disassembles in the library."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", lib], check=True, capture_output=True,
                         text=True).stdout
    offsets, table = [], sections(lib)
    for address in re.findall(r"^\s*([0-9a-f]+):\s+xgetbv\b", out, re.M):
        vma = int(address, 16)
        section = [(v, o) for v, size, o in table if v <= vma < v + size]
        if len(section) != 1:
            sys.exit(f"{lib}: xgetbv at 0x{vma:x} is in no single section")
        offsets.append(vma - section[0][0] + section[0][1])
    return offsets


def other_platforms(folder, names):
    """shutil.copytree's ignore: the package's binaries for other systems (240 of its 290 MB)."""
    skip = {"napi-v6": {"darwin", "win32"}, "linux": {"arm64"}}.get(os.path.basename(folder), set())
    return [n for n in names if n in skip or n == "__pycache__"]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    dest = os.path.abspath(sys.argv[1])
    if os.path.exists(dest):
        sys.exit(f"{dest}: already exists (this script writes a new folder only)")
    package = os.path.join(HERE, "node_modules", "onnxruntime-node")
    if not os.path.isdir(package):
        sys.exit("onnxruntime-node is not installed: run bash bench/ort/setup.sh")
    shutil.copytree(HERE, dest, symlinks=True, ignore=other_platforms)
    lib = os.path.join(dest, "node_modules", "onnxruntime-node", "bin", "napi-v6", "linux", "x64",
                       "libonnxruntime.so.1")
    offsets = xgetbv_offsets(lib)
    if not offsets:
        sys.exit(f"{lib}: no xgetbv found; this onnxruntime-node reads the CPU's features some other way")
    with open(lib, "r+b") as f:
        for offset in offsets:
            f.seek(offset)
            if f.read(3) != XGETBV:
                sys.exit(f"{lib}: the bytes at 0x{offset:x} are not xgetbv")
            f.seek(offset)
            f.write(MOV_AL_7_NOP)
    print(f"{dest}: onnxruntime-node with {len(offsets)} xgetbv reading XCR0 = 7 (no AVX-512 state)")


if __name__ == "__main__":
    main()
