#!/usr/bin/env python3
"""Unit tests of docs/sass_report.py, on a synthetic `cuobjdump -sass` listing (no GPU, no CUDA).

    python3 docs/test_sass_report.py        (ctest runs it as sass_report_script)
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sass_report as sr  # noqa: E402

# What `cuobjdump -sass` prints for a fat binary with sm_90a and sm_100a code: per architecture a
# "Fatbin ptx code:" block (empty under -sass), a "Fatbin elf code:" block, "code for ...", then the
# functions. The layout (tabs, the column of the opcode, right-aligned P guards but left-aligned UP
# guards, " ;" but "NOP;" in the end padding, the second encoding word alone on the next line) was
# copied from real cuobjdump 13 output for sm_90a and sm_100a cubins; each encoding word is that of a
# real instruction with the same opcode, and means nothing to the tool.
#
# The sm_100a toy_tcgen05 is shaped like a tcgen05 GEMM as ptxas lays one out:
#   0x0070-0x0090  TMEM allocation retry loop (UTCATOMSWS, BRA.U !UP0 back)
#   0x00e0-0x01d0  main loop: mbarrier try-wait, whose slow path (0x0260-0x0290) sits after the EXIT
#                  and jumps back into the loop; two elect-one loops (0x0100-0x0130: one UTCCP,
#                  0x0140-0x0180: two UTCQMMA under @!UP0 / @UP0); the commit (UTCBAR)
#   0x01e0-0x0250  epilogue: LDTM, STG, dealloc, a CALL to the trap subroutine at 0x02a0
#   0x02c0-0x02f0  end padding: BRA to itself, NOPs
# The sm_90a toy_tcgen05 has one loop and a spill (STL/LDL); other_kernel is there to be matched too.
LISTING = """\

Fatbin ptx code:
================
arch = sm_90a
code version = [9,0]
host = linux
compile_size = 64bit
compressed
identifier = toy.cu


Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
host = linux
compile_size = 64bit
identifier = toy.cu

\tcode for sm_90a
\t.target\tsm_90a

\t\tFunction : _Z11toy_tcgen05PKfPfi
\t.headerflags\t@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;              /* 0x0000df00ff017b82 */
                                                                       /* 0x000fe20000000800 */
        /*0010*/                   S2R R0, SR_TID.X ;                  /* 0x0000000000007919 */
                                                                       /* 0x000e220000002100 */
        /*0020*/                   STL [R1], R0 ;                      /* 0x0000000401007387 */
                                                                       /* 0x0103e80000100c00 */
        /*0030*/                   MOV R2, RZ ;                        /* 0x0000004000047802 */
                                                                       /* 0x000fe20000000f00 */
        /*0040*/                   LDG.E R4, desc[UR4][R2.64] ;        /* 0x0000000402027981 */
                                                                       /* 0x000ea2000c1e1900 */
        /*0050*/                   VIADD R2, R2, 0x1 ;                 /* 0x00000008040c7836 */
                                                                       /* 0x000fe20000000000 */
        /*0060*/                   ISETP.GE.AND P0, PT, R2, UR5, PT ;  /* 0x000000060b007c0c */
                                                                       /* 0x041fe2000bf06270 */
        /*0070*/              @!P0 BRA 0x40 ;                          /* 0x00000004007c0947 */
                                                                       /* 0x000fea0003800000 */
        /*0080*/                   LDL R5, [R1] ;                      /* 0x0000000009047983 */
                                                                       /* 0x000ee20000100a00 */
        /*0090*/                   STG.E desc[UR4][R2.64], R4 ;        /* 0x0000000702007986 */
                                                                       /* 0x0001e2000c101910 */
        /*00a0*/                   EXIT ;                              /* 0x000000000000094d */
                                                                       /* 0x000fea0003800000 */
        /*00b0*/                   BRA 0xb0;                           /* 0x00000004007c0947 */
                                                                       /* 0x000fea0003800000 */
\t\t..........





Fatbin ptx code:
================
arch = sm_100a
code version = [9,0]
host = linux
compile_size = 64bit
compressed
identifier = toy.cu


Fatbin elf code:
================
arch = sm_100a
code version = [1,8]
host = linux
compile_size = 64bit
identifier = toy.cu

\tcode for sm_100a
\t.target\tsm_100a

\t\tFunction : _Z11toy_tcgen05PKfPfi
\t.headerflags\t@"EF_CUDA_ACCELERATORS EF_CUDA_SM100 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM100)"
        /*0000*/                   LDC R1, c[0x0][0x37c] ;                                                               /* 0x0000df00ff017b82 */
                                                                                                                         /* 0x000fe20000000800 */
        /*0010*/                   S2R R0, SR_TID.X ;                                                                    /* 0x0000000000007919 */
                                                                                                                         /* 0x000e220000002100 */
        /*0020*/                   ISETP.GT.U32.AND P0, PT, R0, 0x1f, PT ;                                               /* 0x0000001f0000780c */
                                                                                                                         /* 0x001fda0003f04070 */
        /*0030*/               @P0 BRA 0xa0 ;                                                                            /* 0x00000004007c0947 */
                                                                                                                         /* 0x000fea0003800000 */
        /*0040*/                   UMOV UR4, 0x4 ;                                                                       /* 0x0000000400047882 */
                                                                                                                         /* 0x000fca0000000000 */
        /*0050*/                   UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN UP0, UR4, UR4 ;                                    /* 0x00000004000475e3 */
                                                                                                                         /* 0x000e240008200800 */
        /*0060*/                   BRA.U UP0, 0xa0 ;                                                                     /* 0x0000000100187547 */
                                                                                                                         /* 0x000fec000b800000 */
        /*0070*/                   NANOSLEEP 0x64 ;                                                                      /* 0x000000640000795d */
                                                                                                                         /* 0x000fea0003800000 */
        /*0080*/                   UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN UP0, UR4, UR4 ;                                    /* 0x00000004000475e3 */
                                                                                                                         /* 0x000e240008200800 */
        /*0090*/                   BRA.U !UP0, 0x70 ;                                                                    /* 0x0000000100187547 */
                                                                                                                         /* 0x000fec000b800000 */
        /*00a0*/                   WARPSYNC.ALL ;                                                                        /* 0x0000000000007948 */
                                                                                                                         /* 0x000fea0003800000 */
        /*00b0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;                                                         /* 0x0000000000007b1d */
                                                                                                                         /* 0x008fec0000010000 */
        /*00c0*/                   UMOV UR9, 0x400 ;                                                                     /* 0x0000000400047882 */
                                                                                                                         /* 0x000fca0000000000 */
        /*00d0*/                   MOV R2, RZ ;                                                                          /* 0x0000004000047802 */
                                                                                                                         /* 0x000fe20000000f00 */
        /*00e0*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9], R3 ;                                        /* 0x00000803040075a7 */
                                                                                                                         /* 0x000e2400080411ff */
        /*00f0*/              @!P0 BRA 0x260 ;                                                                           /* 0x00000004007c0947 */
                                                                                                                         /* 0x000fea0003800000 */
        /*0100*/               @P1 ELECT P2, URZ, PT ;                                                                   /* 0x0000000000ff782f */
                                                                                                                         /* 0x000fe20003840000 */
        /*0110*/                   @UP0 UTCCP.T.S.2CTA.4x32dp128bit tmem[UR8+0x40], gdesc[UR10] ;                        /* 0x0000400a080079e7 */
                                                                                                                         /* 0x0001d80009300000 */
        /*0120*/               @P2 PLOP3.LUT P1, PT, P2, PT, PT, 0x8, 0x80 ;                                             /* 0x000000000080781c */
                                                                                                                         /* 0x000fe40003f2e170 */
        /*0130*/               @P1 BRA.U.ANY 0x100 ;                                                                     /* 0xfffffffd00ec0947 */
                                                                                                                         /* 0x001fea000393ffff */
        /*0140*/               @P1 ELECT P2, URZ, PT ;                                                                   /* 0x0000000000ff782f */
                                                                                                                         /* 0x000fe20003840000 */
        /*0150*/                   @!UP0 UTCQMMA.2CTA gdesc[UR10], gdesc[UR12], tmem[UR8], tmem[UR6], idesc[UR7], UPT ;  /* 0x00ff060c0a0075ea */
                                                                                                                         /* 0x0001d80008200308 */
        /*0160*/                   @UP0 UTCQMMA.2CTA gdesc[UR10], gdesc[UR12], tmem[UR8], tmem[UR6], idesc[UR7], UP1 ;   /* 0x00ff060c0a0075ea */
                                                                                                                         /* 0x0001d80008200308 */
        /*0170*/               @P2 PLOP3.LUT P1, PT, P2, PT, PT, 0x8, 0x80 ;                                             /* 0x000000000080781c */
                                                                                                                         /* 0x000fe40003f2e170 */
        /*0180*/               @P1 BRA.U.ANY 0x140 ;                                                                     /* 0xfffffffd00ec0947 */
                                                                                                                         /* 0x001fea000393ffff */
        /*0190*/                   UTCBAR.2CTA [UR9], URZ ;                                                              /* 0x000000ff090073e9 */
                                                                                                                         /* 0x0001d800082000ff */
        /*01a0*/                   LDS R4, [UR9+0x10] ;                                                                  /* 0x00001c0004027984 */
                                                                                                                         /* 0x000e240000000000 */
        /*01b0*/                   VIADD R2, R2, 0x1 ;                                                                   /* 0x00000008040c7836 */
                                                                                                                         /* 0x000fe20000000000 */
        /*01c0*/                   ISETP.GE.AND P0, PT, R2, UR5, PT ;                                                    /* 0x000000060b007c0c */
                                                                                                                         /* 0x041fe2000bf06270 */
        /*01d0*/              @!P0 BRA 0xe0 ;                                                                            /* 0x00000004007c0947 */
                                                                                                                         /* 0x000fea0003800000 */
        /*01e0*/                   LDTM.x16 R8, tmem[UR8] ;                                                              /* 0x00000008000479ee */
                                                                                                                         /* 0x002e220008140000 */
        /*01f0*/                   STG.E desc[UR16][R2.64], R8 ;                                                         /* 0x0000000702007986 */
                                                                                                                         /* 0x0001e2000c101910 */
        /*0200*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;                                                         /* 0x0000000000007b1d */
                                                                                                                         /* 0x008fec0000010000 */
        /*0210*/               @P0 EXIT ;                                                                                /* 0x000000000000094d */
                                                                                                                         /* 0x000fea0003800000 */
        /*0220*/                   UTCATOMSWS.AND URZ, UR4 ;                                                             /* 0x0000000400ff79e3 */
                                                                                                                         /* 0x0005e20008000000 */
        /*0230*/                   MOV R2, 0x250 ;                                                                       /* 0x0000004000047802 */
                                                                                                                         /* 0x000fe20000000f00 */
        /*0240*/                   CALL.REL.NOINC 0x2a0 ;                                                                /* 0x00000014005c7944 */
                                                                                                                         /* 0x001fea0003c00000 */
        /*0250*/                   EXIT ;                                                                                /* 0x000000000000094d */
                                                                                                                         /* 0x000fea0003800000 */
        /*0260*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9], R3 ;                                        /* 0x00000803040075a7 */
                                                                                                                         /* 0x000e2400080411ff */
        /*0270*/              @!P0 NANOSLEEP.SYNCS 0x989680 ;                                                            /* 0x009896800000a95d */
                                                                                                                         /* 0x002fea0003900000 */
        /*0280*/              @!P0 BRA 0x260 ;                                                                           /* 0x00000004007c0947 */
                                                                                                                         /* 0x000fea0003800000 */
        /*0290*/                   BRA 0x100 ;                                                                           /* 0x00000004007c0947 */
                                                                                                                         /* 0x000fea0003800000 */
        /*02a0*/                   BPT.TRAP 0x1 ;                                                                        /* 0x000000040000795c */
                                                                                                                         /* 0x000fea0000300000 */
        /*02b0*/                   RET.REL.NODEC R2 0x0 ;                                                                /* 0xffffffe402507950 */
                                                                                                                         /* 0x000fea0003c3ffff */
        /*02c0*/                   BRA 0x2c0;                                                                            /* 0x00000004007c0947 */
                                                                                                                         /* 0x000fea0003800000 */
        /*02d0*/                   NOP;                                                                                  /* 0x0000000000007918 */
                                                                                                                         /* 0x000fe20000000000 */
        /*02e0*/                   NOP;                                                                                  /* 0x0000000000007918 */
                                                                                                                         /* 0x000fe20000000000 */
        /*02f0*/                   NOP;                                                                                  /* 0x0000000000007918 */
                                                                                                                         /* 0x000fe20000000000 */
\t\t..........


\t\tFunction : _Z12other_kernelv
\t.headerflags\t@"EF_CUDA_ACCELERATORS EF_CUDA_SM100 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM100)"
        /*0000*/                   S2R R0, SR_TID.X ;  /* 0x0000000000007919 */
                                                       /* 0x000e220000002100 */
        /*0010*/                   STS [R0], RZ ;      /* 0x000008080d007388 */
                                                       /* 0x0001e80000000800 */
        /*0020*/                   EXIT ;              /* 0x000000000000094d */
                                                       /* 0x000fea0003800000 */
        /*0030*/                   BRA 0x30;           /* 0x00000004007c0947 */
                                                       /* 0x000fea0003800000 */
\t\t..........


"""


def run_main(argv, demangle=lambda names: {}):
    """sass_report.main in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = sr.main(argv, demangle=demangle)
        except SystemExit as e:     # argparse's usage errors
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


class ListingFile:
    """The listing (or another text) in a temporary file, for the command line."""

    def __init__(self, text=LISTING):
        self.text = text

    def __enter__(self):
        fd, self.path = tempfile.mkstemp(suffix=".sass")
        with os.fdopen(fd, "w") as f:
            f.write(self.text)
        return self.path

    def __exit__(self, *exc):
        os.unlink(self.path)


def function(name, arch, text=LISTING):
    return next(fn for fn in sr.parse_listing(text) if fn.name == name and fn.arch == arch)


TOY = "_Z11toy_tcgen05PKfPfi"


class ParseInstruction(unittest.TestCase):
    def test_plain(self):
        ins = sr.parse_instruction("        /*0a30*/                   UTCQMMA.2CTA gdesc[UR4], gdesc[UR6], "
                                   "tmem[UR8], tmem[UR10], idesc[UR11], UPT ;   /* 0x00ff060c0a0075ea */")
        self.assertEqual(ins.addr, 0xa30)
        self.assertIsNone(ins.guard)
        self.assertEqual(ins.opcode, "UTCQMMA.2CTA")
        self.assertEqual(ins.mnemonic, "UTCQMMA")
        self.assertEqual(ins.family, "mma")
        self.assertEqual(len(ins.operands), 6)

    def test_guards(self):
        cases = {"              @!P0 BRA 0x260 ;": ("!P0", "BRA"),
                 "               @P1 ELECT P2, URZ, PT ;": ("P1", "ELECT"),
                 "                   @!UP0 UTCQMMA.2CTA gdesc[UR10], gdesc[UR12], tmem[UR8] ;": ("!UP0", "UTCQMMA.2CTA"),
                 "                   @UP0 UTCCP.T.S.2CTA.4x32dp128bit tmem[UR8+0x40], gdesc[UR10] ;": ("UP0", "UTCCP.T.S.2CTA.4x32dp128bit"),
                 "               @PT BRA 0x100 ;": ("PT", "BRA")}
        for text, (guard, opcode) in cases.items():
            ins = sr.parse_instruction("        /*0100*/" + text + "   /* 0x0000000000007918 */")
            self.assertEqual((ins.guard, ins.opcode), (guard, opcode), text)
        self.assertTrue(sr.parse_instruction("        /*0010*/   @!P0 BRA 0x0 ;").conditional)
        self.assertFalse(sr.parse_instruction("        /*0010*/   @PT BRA 0x0 ;").conditional)

    def test_not_instructions(self):
        # The second encoding word, a header line, the end-of-function marker.
        for line in ["                                     /* 0x000fc00000000000 */",
                     "\t.headerflags\t@\"EF_CUDA_SM100\"", "\t\t..........", ""]:
            self.assertIsNone(sr.parse_instruction(line), line)

    def test_semicolon_forms(self):
        ins = sr.parse_instruction("        /*1b30*/                   NOP;          /* 0x0000000000007918 */")
        self.assertEqual((ins.addr, ins.opcode, ins.operands), (0x1b30, "NOP", []))
        ins = sr.parse_instruction("        /*0040*/                   BRA 0x40;")
        self.assertEqual(sr.branch_target(ins), 0x40)
        # No ';' at all: the instruction ends at the comment.
        ins = sr.parse_instruction("        /*0050*/   LDTM.x16 R8, tmem[UR8]   /* 0x00000008000479ee */")
        self.assertEqual((ins.opcode, ins.family), ("LDTM.x16", "tmem_ldst"))

    def test_branch_targets(self):
        def target(text):
            return sr.branch_target(sr.parse_instruction("        /*0600*/   " + text))
        self.assertEqual(target("BRA.U !UP0, 0x1a0 ;"), 0x1a0)
        self.assertEqual(target("@!P0 BRA P1, 0x2be0 ;"), 0x2be0)
        self.assertEqual(target("BRA.DIV UR4, 0x3a30 ;"), 0x3a30)
        self.assertIsNone(target("RET.REL.NODEC R2 0x0 ;"))
        self.assertIsNone(target("BSSY B0, 0x380 ;"))
        self.assertTrue(sr.unconditional_branch(sr.parse_instruction("        /*0*/ BRA 0x40 ;")))
        for text in ["BRA.U UP0, 0x40 ;", "@P0 BRA.U.ANY 0x40 ;", "BRA.DIV UR4, 0x40 ;"]:
            self.assertFalse(sr.unconditional_branch(sr.parse_instruction("        /*0*/ " + text)), text)


class Families(unittest.TestCase):
    def test_first_match_wins(self):
        expect = {"UTCQMMA": "mma", "UTCOMMA": "mma", "UTCHMMA": "mma", "UTCIMMA": "mma", "UTCMMA": "mma",
                  "UTCCP": "utccp", "LDTM": "tmem_ldst", "STTM": "tmem_ldst", "UTCBAR": "tcgen05_other",
                  "UTCATOMSWS": "tcgen05_other", "UTMALDG": "tma", "UTMASTG": "tma", "UTMAPF": "tma",
                  "UTMACCTL": "tma", "UTMACMDFLUSH": "tma", "UBLKCP": "tma", "SYNCS": "mbarrier",
                  "LDGSTS": "cp_async", "LDGDEPBAR": "cp_async", "LDG": "global", "STG": "global",
                  "LDS": "shared", "LDSM": "shared", "STS": "shared", "LDL": "local", "STL": "local",
                  "ELECT": "elect", "WARPSYNC": "warpsync", "BAR": "bar", "UCGABAR_ARV": "cluster_bar",
                  "MEMBAR": None, "FFMA": None, "BRA": None, "NOP": None}
        for mnemonic, family in expect.items():
            self.assertEqual(sr.family_of(mnemonic), family, mnemonic)


class Listing(unittest.TestCase):
    def test_sections_and_headers(self):
        fns = sr.parse_listing(LISTING)
        self.assertEqual([(f.arch, f.name, len(f.instructions)) for f in fns],
                         [("sm_90a", TOY, 12), ("sm_100a", TOY, 48), ("sm_100a", "_Z12other_kernelv", 4)])
        toy = fns[1]
        self.assertEqual(toy.header, ["Fatbin elf code:", "arch = sm_100a", "code version = [1,8]", "host = linux",
                                      "compile_size = 64bit", "identifier = toy.cu", "code for sm_100a",
                                      ".target sm_100a"])
        self.assertIn("EF_CUDA_SM100", toy.headerflags)
        self.assertEqual([i.addr for i in toy.instructions], list(range(0, 0x300, 0x10)))

    def test_cubin_listing_without_fatbin_block(self):
        # cuobjdump of a plain cubin starts at "code for".
        text = LISTING[LISTING.index("\tcode for sm_100a"):]
        fn = function(TOY, "sm_100a", text)
        self.assertEqual(fn.header, ["code for sm_100a", ".target sm_100a"])
        self.assertEqual(len(fn.instructions), 48)


class Sm100Report(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.doc = sr.analyse(function(TOY, "sm_100a"))

    def test_totals(self):
        d = self.doc
        self.assertEqual((d["instructions"], d["padding"]), (48, 4))
        counts = {k: v["count"] for k, v in d["families"].items()}
        self.assertEqual(counts, {"mma": 2, "utccp": 1, "tmem_ldst": 1, "tcgen05_other": 4, "tma": 0,
                                  "mbarrier": 2, "cp_async": 0, "global": 1, "shared": 1, "local": 0,
                                  "elect": 2, "warpsync": 1, "bar": 2, "cluster_bar": 0})
        self.assertEqual(d["families"]["mma"]["opcodes"], {"UTCQMMA.2CTA": 2})
        self.assertEqual(d["families"]["tcgen05_other"]["opcodes"],
                         {"UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN": 2, "UTCATOMSWS.AND": 1, "UTCBAR.2CTA": 1})

    def test_loops(self):
        loops = self.doc["loops"]
        # Innermost first: the allocation loop, then the main loop's three inner loops, then it.
        self.assertEqual([(l["id"], l["start"], l["end"], l["kind"], l["parent"], l["depth"]) for l in loops],
                         [(1, "0x0070", "0x0090", "loop", None, 0),
                          (2, "0x0100", "0x0130", "elect-one", 5, 1),
                          (3, "0x0140", "0x0180", "elect-one", 5, 1),
                          (4, "0x0260", "0x0280", "mbarrier wait", 5, 1),
                          (5, "0x00e0", "0x01d0", "loop", None, 0)])
        self.assertTrue(all(l["found_by"] == "dominance" for l in loops))
        self.assertEqual(loops[4]["children"], [2, 3, 4])
        main = loops[4]
        self.assertEqual(main["instructions"], 16)
        self.assertEqual({k: n for k, n in main["families"].items() if n},
                         {"mma": 2, "utccp": 1, "tcgen05_other": 1, "mbarrier": 1, "shared": 1, "elect": 2})
        # The mbarrier wait's slow path belongs to the main loop but lies outside its range.
        self.assertEqual(main["out_of_line"]["instructions"], 4)
        self.assertEqual(main["out_of_line"]["ranges"], [["0x0260", "0x0290"]])
        self.assertEqual({k: n for k, n in main["out_of_line"]["families"].items() if n}, {"mbarrier": 1})
        self.assertEqual((loops[2]["instructions"], loops[2]["families"]["mma"]), (5, 2))
        self.assertEqual(loops[0]["families"]["tcgen05_other"], 1)

    def test_return_from_slow_path_is_no_loop(self):
        self.assertEqual(self.doc["backward_jumps_not_loops"], [{"from": "0x0290", "to": "0x0100"}])
        self.assertTrue(self.doc["control_flow_complete"])

    def test_indirect_branch_falls_back_to_addresses(self):
        # With a BRX the control flow is unknown: every backward branch closes a loop by address, the
        # slow path's return included, which merges with the elect-one loop that starts at 0x0100.
        text = LISTING.replace("BPT.TRAP 0x1 ;", "BRX R4 -0x2b0 ;")
        doc = sr.analyse(function(TOY, "sm_100a", text))
        self.assertFalse(doc["control_flow_complete"])
        self.assertEqual(doc["backward_jumps_not_loops"], [])
        spans = {(l["start"], l["end"]): l for l in doc["loops"]}
        self.assertEqual(sorted(spans), [("0x0070", "0x0090"), ("0x00e0", "0x01d0"), ("0x0100", "0x0290"),
                                         ("0x0140", "0x0180"), ("0x0260", "0x0280")])
        self.assertTrue(all(l["found_by"] == "address-only" for l in doc["loops"]))
        self.assertEqual(spans[("0x0100", "0x0290")]["latches"], ["0x0130", "0x0290"])


class Sm90Report(unittest.TestCase):
    def test_spill_and_loop(self):
        doc = sr.analyse(function(TOY, "sm_90a"))
        self.assertEqual((doc["instructions"], doc["padding"]), (12, 1))
        self.assertEqual(doc["families"]["local"]["opcodes"], {"LDL": 1, "STL": 1})
        self.assertEqual(doc["families"]["mma"]["count"], 0)
        self.assertEqual([(l["start"], l["end"], l["instructions"], l["families"]["global"]) for l in doc["loops"]],
                         [("0x0040", "0x0070", 4, 1)])
        self.assertIn("local memory is used", sr.format_report(doc, "x"))


class CommandLine(unittest.TestCase):
    def test_report_and_json(self):
        with ListingFile() as path, tempfile.TemporaryDirectory() as tmp:
            out_json = os.path.join(tmp, "r.json")
            rc, out, err = run_main([path, "--kernel", "toy_tcgen05", "--json", out_json])
            self.assertEqual(rc, 0, err)
            self.assertIn("UTCQMMA.2CTA x2", out)
            self.assertIn("#5   [0x00e0, 0x01d0]    16 instr", out)
            with open(out_json) as f:
                doc = json.load(f)
        self.assertEqual((doc["arch"], doc["kernel"]), ("sm_100a", "toy_tcgen05"))
        self.assertEqual(len(doc["functions"]), 1)
        fn = doc["functions"][0]
        self.assertIn("arch = sm_100a", fn["header"])
        self.assertIn("code for sm_100a", fn["header"])
        self.assertEqual(fn["families"]["mma"]["count"], 2)
        self.assertEqual(fn["loops"][4]["families"]["mma"], 2)

    def test_arch_option(self):
        with ListingFile() as path:
            rc, out, _ = run_main([path, "--kernel", "toy", "--arch", "sm_90a"])
            self.assertEqual(rc, 0)
            self.assertIn("LDL x1, STL x1", out)
            rc, _, err = run_main([path, "--kernel", "toy", "--arch", "sm_80"])
            self.assertEqual(rc, 1)
            self.assertIn("found: sm_100a, sm_90a", err)

    def test_several_matches_and_no_match(self):
        with ListingFile() as path:
            rc, out, _ = run_main([path, "--kernel", "_Z1", "--json", "-"])
            self.assertEqual(rc, 0)
            self.assertEqual([f["name"] for f in json.loads(out)["functions"]], [TOY, "_Z12other_kernelv"])
            rc, _, err = run_main([path, "--kernel", "no_such_kernel"])
            self.assertEqual(rc, 1)
            self.assertIn("_Z12other_kernelv", err)
            rc, _, _ = run_main([path])     # neither --kernel nor --list
            self.assertEqual(rc, 2)

    def test_demangled_names(self):
        names = {TOY: "toy_tcgen05(float const*, float*, int)", "_Z12other_kernelv": "other_kernel()"}
        with ListingFile() as path:
            rc, out, _ = run_main([path, "--kernel", "toy_tcgen05(float const*"], demangle=lambda n: names)
            self.assertEqual(rc, 0)
            self.assertIn("   toy_tcgen05(float const*, float*, int)", out)
            rc, out, _ = run_main([path, "--list"], demangle=lambda n: names)
            self.assertEqual(rc, 0)
            self.assertEqual(out.splitlines(),
                             ["sm_100a        48  %s  [toy_tcgen05(float const*, float*, int)]" % TOY,
                              "sm_100a         4  _Z12other_kernelv  [other_kernel()]"])

    def test_runs_as_a_program(self):
        with ListingFile() as path:
            res = subprocess.run([sys.executable, os.path.join(HERE, "sass_report.py"), path,
                                  "--kernel", "toy", "--hide-small-loops"], capture_output=True, text=True)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("(3 elect-one and mbarrier-wait loops not shown)", res.stdout)
        self.assertNotIn("elect-one     in #5", res.stdout)


if __name__ == "__main__":
    unittest.main()
