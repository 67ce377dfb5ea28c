// The MMA kinds that share NVFP4's FP32 accumulator, instruction by instruction, on the GPU:
// tcgen05.mma kind::mxf8f6f4.block_scale.block32 (MXFP8) and kind::f16 (FP16/BF16), alone and mixed
// with kind::mxf4nvf4 in one accumulator. On Hopper this exercises the emulator
// (common/emu/tcgen05_emu_kinds.cuh) and the protocol checker; on a B200 the same tests run the
// hardware, except the refusal tests, which are the emulator's.
//
// Each test runs a short program of tcgen05.cp and tcgen05.mma instructions on operands placed as a
// kernel places them (A and B by TMA with the 128-byte swizzle, scale atoms by bulk copy and
// tcgen05.cp) and compares the accumulator with a CPU model of the PTX semantics, computed in FP64:
// the model copies scale atoms into a model of Tensor Memory as .32x128b.warpx4 is defined, and each
// MMA reads its scales from there (the byte its scale id names), its operands from the unswizzled
// source rows. The data is exact-tier (every partial sum exact in FP32), so results must match bit
// for bit, and built so that a wrong field cannot pass: every row's four scale bytes differ (a wrong
// scale id or K step changes the scale), A and B differ in content and in format (a swapped operand
// order or type field changes the values), every element format is one whose codes decode
// differently under the other format. The negative controls break one field each and must fail.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/device_buffer.h"
#include "common/device_info.h"
#include "common/formats.h"
#include "common/harness/gemm_tests.h"
#include "common/harness/problems.h"
#include "common/ptx/cluster.cuh"
#include "common/ptx/tcgen05.cuh"
#include "common/ptx/tma.cuh"
#include "common/reference.h"
#include "common/sf_layout.h"
#include "common/swizzle.h"
#include "common/tcgen05_desc.h"
#include "common/tcgen05_desc_kinds.h"
#include "common/tensor_map.h"

namespace gemm {
namespace {

using namespace gemm::ptx;
using tcgen05::MmaKind;

// ---- The program a test kernel runs -------------------------------------------------------------------

enum Op : uint32_t { kCpA = 0, kCpB = 1, kMma = 2 };

// One instruction. cp: scale atom `atom` of A (this CTA's own) or B into column `col`. mma: kind,
// operands at byte `k_offset` of atom `a_atom` / `b_atom` of each 128-byte row, descriptor `idesc`,
// D at column `col`, scales at sfa_col / sfb_col, enable-input-d = accumulate; swap_ab (a negative
// control) passes B's descriptor as A's and A's as B's.
struct Instr {
  uint32_t op, kind, atom, a_atom, b_atom, k_offset, idesc, col, sfa_col, sfb_col, accumulate, swap_ab;
};
constexpr int kMaxInstrs = 40;

constexpr uint32_t kAtomBytes = 128;  // one 128-byte swizzle row: the K of 4 instructions of any kind
constexpr uint32_t kSfColumn = 256;   // TMEM: D in columns [0, N), scale factors from column 256

struct KindParams {
  int N;                 // columns of D (B rows of the pair in all)
  int a_atoms, b_atoms;  // 128-byte K atoms per row of A and of B
  int sfa_atoms, sfb_atoms;
  const uint8_t* sfa;    // [CTA of the pair][sfa_atoms][512]
  const uint8_t* sfb;    // [sfb_atoms][512], the same in both CTAs
  float* out;            // (128 * cta_group) x N
  int warp_collective;   // _warp wrappers (else one thread, the PTX convention)
  int count;
  Instr instrs[kMaxInstrs];
};

template <int kCtaGroup>
__device__ void issue_program(const KindParams& p, uint32_t tmem, unsigned char* a_tiles, unsigned char* b_tiles,
                              uint8_t* sfa, uint8_t* sfb, bool warp) {
  const int b_rows = p.N / kCtaGroup;
  for (int i = 0; i < p.count; ++i) {
    const Instr& in = p.instrs[i];
    if (in.op != kMma) {
      const uint64_t s = tcgen05::sf_atom_descriptor(smem_addr((in.op == kCpA ? sfa : sfb) + in.atom * 512));
      if (warp)
        tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(tmem + in.col, s);
      else
        tcgen05_cp_32x128b_warpx4<kCtaGroup>(tmem + in.col, s);
      continue;
    }
    uint64_t a = tcgen05::advance_start(
        tcgen05::kmajor_sw128_descriptor(smem_addr(a_tiles + in.a_atom * 128 * kAtomBytes)), in.k_offset);
    uint64_t b = tcgen05::advance_start(
        tcgen05::kmajor_sw128_descriptor(smem_addr(b_tiles + in.b_atom * b_rows * kAtomBytes)), in.k_offset);
    if (in.swap_ab) {
      const uint64_t t = a;
      a = b;
      b = t;
    }
    const uint32_t d = tmem + in.col, sa = tmem + in.sfa_col, sb = tmem + in.sfb_col;
    const bool acc = in.accumulate != 0;
    if (in.kind == uint32_t(MmaKind::kMxf4Nvf4)) {
      if (warp)
        tcgen05_mma_nvfp4_warp<kCtaGroup>(d, a, b, in.idesc, sa, sb, acc);
      else
        tcgen05_mma_nvfp4<kCtaGroup>(d, a, b, in.idesc, sa, sb, acc);
    } else if (in.kind == uint32_t(MmaKind::kMxf8f6f4)) {
      if (warp)
        tcgen05_mma_mxf8f6f4_warp<kCtaGroup>(d, a, b, in.idesc, sa, sb, acc);
      else
        tcgen05_mma_mxf8f6f4<kCtaGroup>(d, a, b, in.idesc, sa, sb, acc);
    } else {
      if (warp)
        tcgen05_mma_f16_warp<kCtaGroup>(d, a, b, in.idesc, acc);
      else
        tcgen05_mma_f16<kCtaGroup>(d, a, b, in.idesc, acc);
    }
  }
}

// One CTA (kCtaGroup 1: M = 128) or one CTA pair (kCtaGroup 2: M = 256) loads every operand into
// shared memory, runs the program from one warp of the even CTA, commits, and reads D back.
template <int kCtaGroup>
__global__ void __launch_bounds__(128) kinds_kernel(const __grid_constant__ CUtensorMap map_a,
                                                     const __grid_constant__ CUtensorMap map_b, const __grid_constant__ KindParams p) {
  ProtocolScope protocol_scope;  // the protocol checker sees each thread enter and leave (no code in release)
  extern __shared__ unsigned char raw[];
  unsigned char* smem = align_to_swizzle_atom(raw);
  __shared__ uint64_t full, done;
  __shared__ uint32_t tmem_base;

  const int rank = kCtaGroup == 2 ? int(cluster_ctarank()) : 0;
  const int b_rows = p.N / kCtaGroup;
  unsigned char* a_tiles = smem;                                      // a_atoms x 128 rows x 128 B
  unsigned char* b_tiles = a_tiles + p.a_atoms * 128 * kAtomBytes;    // b_atoms x b_rows x 128 B
  uint8_t* sfa = b_tiles + p.b_atoms * b_rows * kAtomBytes;           // sfa_atoms x 512 B
  uint8_t* sfb = sfa + p.sfa_atoms * 512;                             // sfb_atoms x 512 B

  if (threadIdx.x == 0) {
    mbarrier_init(&full, 1);
    mbarrier_init(&done, 1);
    fence_mbarrier_init();
  }
  if constexpr (kCtaGroup == 2) cluster_sync();  // a pair's alloc needs the peer known to run
  if (threadIdx.x < 32) tcgen05_alloc<kCtaGroup>(&tmem_base, 512);
  tcgen05_fence_before_thread_sync();
  cta_sync();  // a CTA barrier the checker sees (it orders Tensor Memory work across warps)
  if constexpr (kCtaGroup == 2) cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem = tmem_base;

  // Every CTA loads its own operands: its 128 rows of A, its share of B, its scales of A, all of SFB.
  if (threadIdx.x == 0) {
    const uint32_t bytes = uint32_t(p.a_atoms * 128 * kAtomBytes + p.b_atoms * b_rows * kAtomBytes +
                                    (p.sfa_atoms + p.sfb_atoms) * 512);
    mbarrier_arrive_expect_tx(&full, bytes);
    for (int a = 0; a < p.a_atoms; ++a)
      tma_load_3d(a_tiles + a * 128 * kAtomBytes, &map_a, a * int(kAtomBytes), 128 * rank, 0, &full, 128 * kAtomBytes);
    for (int a = 0; a < p.b_atoms; ++a)
      tma_load_3d(b_tiles + a * b_rows * kAtomBytes, &map_b, a * int(kAtomBytes), b_rows * rank, 0, &full,
                  uint32_t(b_rows) * kAtomBytes);
    for (int j = 0; j < p.sfa_atoms; ++j) bulk_copy_g2s(sfa + j * 512, p.sfa + (rank * p.sfa_atoms + j) * 512, 512, &full);
    for (int j = 0; j < p.sfb_atoms; ++j) bulk_copy_g2s(sfb + j * 512, p.sfb + j * 512, 512, &full);
  }
  mbarrier_wait_bounded(&full, 0, wait_timeout_ns(), "full", 0);
  if constexpr (kCtaGroup == 2) cluster_sync();
  tcgen05_fence_after_thread_sync();

  const uint16_t pair_mask = kCtaGroup == 2 ? 0x3 : 0x1;
  if (rank == 0 && threadIdx.x < 32) {
    if (p.warp_collective) {
      issue_program<kCtaGroup>(p, tmem, a_tiles, b_tiles, sfa, sfb, true);
      tcgen05_commit_multicast_warp<kCtaGroup>(&done, pair_mask);
    } else if (elect_one_sync()) {
      issue_program<kCtaGroup>(p, tmem, a_tiles, b_tiles, sfa, sfb, false);
      tcgen05_commit_multicast<kCtaGroup>(&done, pair_mask);
    }
  }
  // Every CTA's 128 rows of D arrive in its own Tensor Memory; each warp reads its 32 lanes.
  wait_commit(&done, 0, "done", 0);
  tcgen05_fence_after_thread_sync();
  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  for (int c = 0; c < p.N; c += 32) {
    uint32_t r[32];
    tcgen05_ld_32x32b<32>(tmem + tcgen05::tmem_address(32 * warp, uint32_t(c)), r);
    tcgen05_wait_ld();
    for (int i = 0; i < 32; ++i) p.out[int64_t(128 * rank + 32 * warp + lane) * p.N + c + i] = __uint_as_float(r[i]);
  }
  tcgen05_fence_before_thread_sync();
  cta_sync();  // a CTA barrier the checker sees (it orders Tensor Memory work across warps)
  if constexpr (kCtaGroup == 2) cluster_sync();
  if (threadIdx.x < 32) {
    tcgen05_relinquish_alloc_permit<kCtaGroup>();
    tcgen05_dealloc<kCtaGroup>(tmem, 512);
  }
}

// ---- Host side: a program, its data, and the CPU model of what it computes ------------------------------

// What an MMA is meant to compute, as the PTX ISA defines it: the CPU model's input. A negative
// control changes the issued instruction (its descriptor, its K offset) and leaves this alone.
struct Meaning {
  MmaKind kind;
  uint32_t a_type, b_type;  // mxf8f6f4: tcgen05::kMxType*; f16: tcgen05::kF16Type*
  bool negate_a, negate_b;
  uint32_t sfa_id, sfb_id;  // mxf8f6f4
  uint32_t n;               // columns of D written
};

struct Program {
  int cta_group = 1, N = 128;
  int a_atoms = 1, b_atoms = 1, sfa_atoms = 0, sfb_atoms = 0;
  std::vector<uint8_t> A, B;      // rows x atoms x 128 bytes: (128 cta_group) rows of A, N rows of B
  std::vector<uint8_t> sfa, sfb;  // cta_group x sfa_atoms x 512, sfb_atoms x 512
  std::vector<Instr> issued, meant;
  std::vector<Meaning> meaning;   // per instruction (unused for cp)
  bool warp = true;

  int M() const { return 128 * cta_group; }
  uint8_t* a_row(int r, int atom) { return A.data() + (size_t(r) * a_atoms + atom) * kAtomBytes; }
  uint8_t* b_row(int r, int atom) { return B.data() + (size_t(r) * b_atoms + atom) * kAtomBytes; }
  const uint8_t* a_row(int r, int atom) const { return A.data() + (size_t(r) * a_atoms + atom) * kAtomBytes; }
  const uint8_t* b_row(int r, int atom) const { return B.data() + (size_t(r) * b_atoms + atom) * kAtomBytes; }
  void allocate(int cg, int n, int a_at, int b_at, int sfa_at, int sfb_at) {
    cta_group = cg;
    N = n;
    a_atoms = a_at;
    b_atoms = b_at;
    sfa_atoms = sfa_at;
    sfb_atoms = sfb_at;
    A.assign(size_t(M()) * a_atoms * kAtomBytes, 0);
    B.assign(size_t(N) * b_atoms * kAtomBytes, 0);
    sfa.assign(size_t(cg) * sfa_atoms * 512, 0);
    sfb.assign(size_t(sfb_atoms) * 512, 0);
  }
  void cp(Op op, uint32_t atom, uint32_t col) {
    const Instr in{op, 0, atom, 0, 0, 0, 0, col, 0, 0, 0, 0};
    issued.push_back(in);
    meant.push_back(in);
    meaning.push_back({});
  }
  void mma(const Meaning& m, uint32_t a_atom, uint32_t b_atom, uint32_t k_offset, uint32_t sfa_col, uint32_t sfb_col,
           bool accumulate) {
    const Instr in{kMma, uint32_t(m.kind), 0, a_atom, b_atom, k_offset, descriptor(m), 0, sfa_col, sfb_col,
                   uint32_t(accumulate), 0};
    issued.push_back(in);
    meant.push_back(in);
    meaning.push_back(m);
  }
  uint32_t descriptor(const Meaning& m) const {
    const uint32_t mm = uint32_t(M());
    switch (m.kind) {
      case MmaKind::kMxf4Nvf4: {
        tcgen05::InstrDescriptor d;
        d.m = mm;
        d.n = m.n;
        d.negate_a = m.negate_a;
        d.negate_b = m.negate_b;
        return tcgen05::encode(d);
      }
      case MmaKind::kMxf8f6f4: {
        tcgen05::Mxf8f6f4InstrDescriptor d;
        d.a_type = m.a_type;
        d.b_type = m.b_type;
        d.m = mm;
        d.n = m.n;
        d.negate_a = m.negate_a;
        d.negate_b = m.negate_b;
        d.sfa_id = m.sfa_id;
        d.sfb_id = m.sfb_id;
        return tcgen05::encode(d);
      }
      case MmaKind::kF16: {
        tcgen05::F16InstrDescriptor d;
        d.a_type = m.a_type;
        d.b_type = m.b_type;
        d.m = mm;
        d.n = m.n;
        d.negate_a = m.negate_a;
        d.negate_b = m.negate_b;
        return tcgen05::encode(d);
      }
    }
    return 0;
  }
};

// The byte of a 512-byte blocked scale atom that holds the scale of row r (0..127) for K block j
// (0..3): 32 lines of 16 bytes, line r % 32 holding rows r % 32 + 32 q, four bytes each
// (common/sf_layout.h; the layout cuBLAS uses for NVFP4 and MXFP8 alike).
size_t atom_byte(int r, int j) { return size_t(r % 32) * 16 + size_t(r / 32) * 4 + size_t(j); }

// The CPU model: FP64, from the PTX ISA's definitions. Tensor Memory holds what the program's cps put
// there (.32x128b.warpx4: line i of the atom, 16 bytes, into lanes i, 32 + i, 64 + i, 96 + i of 4
// columns, in every CTA of the group, each from its own atom); an MMA reads, for row r, the word at lane
// r % 32, column (scale column) + r / 32, and of it byte SF_ID (1X), or byte s for the s-th 16 values
// (block16). D rows of CTA v use CTA v's Tensor Memory. If `exact` is given, it is cleared unless every
// finite partial sum, the products added one at a time in FP32 in k order (the emulator's order), equals
// the FP64 sum: the property the bit-for-bit comparisons rely on. (The data is built so that any order
// is exact: every product lies on one grid and no sum can leave FP32's 24 bits.)
std::vector<double> model(const Program& p, bool* exact = nullptr) {
  const int M = p.M(), N = p.N;
  std::vector<uint32_t> tm(size_t(p.cta_group) * 128 * 512, 0);
  auto cell = [&](int v, int lane, int col) -> uint32_t& { return tm[(size_t(v) * 128 + lane) * 512 + col]; };
  std::vector<double> D(size_t(M) * N, 0.0);
  for (size_t i = 0; i < p.meant.size(); ++i) {
    const Instr& in = p.meant[i];
    if (in.op != kMma) {
      for (int v = 0; v < p.cta_group; ++v) {
        const uint8_t* atom = in.op == kCpA ? p.sfa.data() + (size_t(v) * p.sfa_atoms + in.atom) * 512
                                            : p.sfb.data() + size_t(in.atom) * 512;
        for (int line = 0; line < 32; ++line)
          for (int j = 0; j < 4; ++j) {
            uint32_t w;
            std::memcpy(&w, atom + line * 16 + 4 * j, 4);
            for (int q = 0; q < 4; ++q) cell(v, 32 * q + line, int(in.col) + j) = w;
          }
      }
      continue;
    }
    const Meaning& mn = p.meaning[i];
    for (int row = 0; row < M; ++row) {
      const int v = row / 128, m = row % 128;
      // swap_ab (one CTA, M = N): the A operand is B's tile and the B operand A's.
      const uint8_t* a = in.swap_ab ? p.B.data() + (size_t(row) * p.b_atoms + in.b_atom) * kAtomBytes + in.k_offset
                                    : p.A.data() + (size_t(row) * p.a_atoms + in.a_atom) * kAtomBytes + in.k_offset;
      const uint32_t sfa_word = cell(v, m % 32, int(in.sfa_col) + m / 32);
      for (int n = 0; n < int(mn.n); ++n) {
        const uint8_t* b = in.swap_ab ? p.A.data() + (size_t(n) * p.a_atoms + in.a_atom) * kAtomBytes + in.k_offset
                                      : p.B.data() + (size_t(n) * p.b_atoms + in.b_atom) * kAtomBytes + in.k_offset;
        const uint32_t sfb_word = cell(v, n % 32, int(in.sfb_col) + n / 32);
        // D = start + sign * sum of products; the FP32 partial sums of the same signed products, added
        // one at a time, must equal the FP64 ones for the data to be exact-tier.
        double& d = D[size_t(row) * N + n];
        const double start = in.accumulate ? d : 0.0, sign = mn.negate_a != mn.negate_b ? -1.0 : 1.0;
        double sum = start;
        float running = float(start);
        auto add = [&](double product) {
          const double q = sign * product;
          sum += q;
          running += float(q);
          if (exact && std::isfinite(sum) && (double(float(q)) != q || double(running) != sum)) *exact = false;
        };
        if (mn.kind == MmaKind::kMxf4Nvf4) {
          for (int k = 0; k < 64; ++k) {
            const uint8_t ca = k % 2 ? e2m1_odd(a[k / 2]) : e2m1_even(a[k / 2]);
            const uint8_t cb = k % 2 ? e2m1_odd(b[k / 2]) : e2m1_even(b[k / 2]);
            const double sa = ue4m3_to_float(uint8_t(sfa_word >> (8 * (k / 16))));
            const double sb = ue4m3_to_float(uint8_t(sfb_word >> (8 * (k / 16))));
            add(double(e2m1_to_float(ca)) * sa * double(e2m1_to_float(cb)) * sb);
          }
        } else if (mn.kind == MmaKind::kMxf8f6f4) {
          auto dec = [](uint32_t type, uint8_t c) {
            return double(type == tcgen05::kMxTypeE4M3 ? e4m3_to_float(c) : e5m2_to_float(c));
          };
          const double sa = ue8m0_to_float(uint8_t(sfa_word >> (8 * mn.sfa_id)));
          const double sb = ue8m0_to_float(uint8_t(sfb_word >> (8 * mn.sfb_id)));
          for (int k = 0; k < 32; ++k) add(dec(mn.a_type, a[k]) * sa * (dec(mn.b_type, b[k]) * sb));
        } else {
          auto dec = [](uint32_t type, const uint8_t* x) {
            const uint16_t h = uint16_t(x[0] | x[1] << 8);
            return double(type == tcgen05::kF16TypeF16 ? fp16_bits_to_float(h) : bf16_bits_to_float(h));
          };
          for (int k = 0; k < 16; ++k) add(dec(mn.a_type, a + 2 * k) * dec(mn.b_type, b + 2 * k));
        }
        d = sum;
      }
    }
  }
  return D;
}

struct Outcome {
  std::vector<float> got;
  std::vector<double> want;
  int64_t mismatches() const {
    int64_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
      bad += std::isnan(want[i]) ? !std::isnan(got[i]) : !(double(got[i]) == want[i]);
    return bad;
  }
  std::string first_mismatches(int n, int N) const {
    std::string s;
    for (size_t i = 0; i < got.size() && n > 0; ++i)
      if (std::isnan(want[i]) ? !std::isnan(got[i]) : !(double(got[i]) == want[i])) {
        s += "  D[" + std::to_string(i / N) + "][" + std::to_string(i % N) + "] = " + std::to_string(got[i]) +
             ", model " + std::to_string(want[i]) + "\n";
        --n;
      }
    return s;
  }
};

// The map of byte rows: `rows` rows of `row_bytes` bytes, boxes of box_rows x 128 bytes, 128-byte
// swizzle. (plan_packed_operand counts a row in FP4 values, two per byte.)
CUtensorMap byte_rows_map(const uint8_t* base, int rows, int row_bytes, int box_rows) {
  return encode_tensor_map(plan_packed_operand(base, rows, 2 * row_bytes, 1, box_rows, int(kAtomBytes)));
}

template <int kCtaGroup>
std::vector<float> launch(const Program& prog) {
  bind_device_state();  // this file's deadline, checker and emulator (common/device_state.h)
  if (int(prog.issued.size()) > kMaxInstrs) throw std::invalid_argument("program longer than kMaxInstrs");
  DeviceBuffer<uint8_t> A(prog.A), B(prog.B), SFA(prog.sfa.empty() ? std::vector<uint8_t>(512) : prog.sfa),
      SFB(prog.sfb.empty() ? std::vector<uint8_t>(512) : prog.sfb);
  DeviceBuffer<float> out(size_t(prog.M()) * prog.N);
  out.fill_bytes(0xFF);  // poison: NaN
  const int b_rows = prog.N / kCtaGroup;
  const CUtensorMap ma = byte_rows_map(A.get(), prog.M(), prog.a_atoms * int(kAtomBytes), 128);
  const CUtensorMap mb = byte_rows_map(B.get(), prog.N, prog.b_atoms * int(kAtomBytes), b_rows);
  KindParams p{};
  p.N = prog.N;
  p.a_atoms = prog.a_atoms;
  p.b_atoms = prog.b_atoms;
  p.sfa_atoms = prog.sfa_atoms;
  p.sfb_atoms = prog.sfb_atoms;
  p.sfa = SFA.get();
  p.sfb = SFB.get();
  p.out = out.get();
  p.warp_collective = prog.warp;
  p.count = int(prog.issued.size());
  std::copy(prog.issued.begin(), prog.issued.end(), p.instrs);
  const int smem = 1024 + prog.a_atoms * 128 * int(kAtomBytes) + prog.b_atoms * b_rows * int(kAtomBytes) +
                   (prog.sfa_atoms + prog.sfb_atoms) * 512;
  CUDA_CHECK(cudaFuncSetAttribute(kinds_kernel<kCtaGroup>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(kCtaGroup);
  cfg.blockDim = dim3(128);
  cfg.dynamicSmemBytes = size_t(smem);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kCtaGroup;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, kinds_kernel<kCtaGroup>, ma, mb, p));
  CUDA_CHECK(cudaDeviceSynchronize());
  return out.download();
}

Outcome run(const Program& prog) {
  Outcome r;
  r.got = prog.cta_group == 1 ? launch<1>(prog) : launch<2>(prog);
  r.want = model(prog);
  return r;
}

// ---- Exact-tier data ---------------------------------------------------------------------------------------

// MXFP8 elements: +-(1 + m/4) 2^e, e in {-1, 0, 1}, two mantissa bits: multiples of 2^-3 up to 3.5, one
// in 16 zero. With UE8M0 scales 2^-1 .. 2^2 a product is a multiple of 2^-8 below 196, so a sum of
// up to 256 of them stays exact in FP32 (2^16 / 2^-8 = 2^24).
uint8_t exact_e4m3(std::mt19937_64& rng) {
  const uint32_t r = uint32_t(rng());
  if (r % 16 == 0) return 0;
  return uint8_t((r & 0x100 ? 0x80 : 0) | (6 + (r >> 9) % 3) << 3 | ((r >> 12) % 4) << 1);
}
uint8_t exact_e5m2(std::mt19937_64& rng) {
  const uint32_t r = uint32_t(rng());
  if (r % 16 == 0) return 0;
  return uint8_t((r & 0x100 ? 0x80 : 0) | (14 + (r >> 9) % 3) << 2 | (r >> 12) % 4);
}
uint8_t exact_mx(uint32_t type, std::mt19937_64& rng) { return type == tcgen05::kMxTypeE4M3 ? exact_e4m3(rng) : exact_e5m2(rng); }

// F16/BF16 elements: j / 4 for j in [-16, 16], exact in both formats: products are multiples of 2^-4
// up to 16.
uint16_t exact_16(uint32_t type, std::mt19937_64& rng) {
  const double v = (int(rng() % 33) - 16) / 4.0;
  if (type == tcgen05::kF16TypeF16) return half_bits_from_double(v);
  const float f = float(v);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return uint16_t(bits >> 16);  // exact: v has at most 5 significant bits
}

// A 512-byte UE8M0 atom: for every row, the four K blocks get the exponents -1, 0, 1, 2 in a random
// order, so every byte of a row's word differs from the other three.
void fill_ue8m0_atom(uint8_t* atom, std::mt19937_64& rng) {
  for (int r = 0; r < 128; ++r) {
    int e[4] = {-1, 0, 1, 2};
    std::shuffle(e, e + 4, rng);
    for (int j = 0; j < 4; ++j) atom[atom_byte(r, j)] = uint8_t(127 + e[j]);
  }
}

// ---- Programs -------------------------------------------------------------------------------------------------

// An MXFP8 K loop: K = 128 * k_atoms (4 instructions per 128-byte atom, K block j of the atom's 4 reading
// byte j of the scale words), A of a_type, B of b_type. Per atom t, SFA is copied to column
// kSfColumn + 16 t and SFB (N / 128 atoms, rounded up) from kSfColumn + 16 t + 4.
Program mxf8_program(int cta_group, int N, int k_atoms, uint32_t a_type, uint32_t b_type, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Program p;
  const int sfb_per = (N + 127) / 128;
  p.allocate(cta_group, N, k_atoms, k_atoms, k_atoms, k_atoms * sfb_per);
  for (auto& x : p.A) x = exact_mx(a_type, rng);
  for (auto& x : p.B) x = exact_mx(b_type, rng);
  for (int i = 0; i < cta_group * k_atoms; ++i) fill_ue8m0_atom(p.sfa.data() + i * 512, rng);
  for (int i = 0; i < k_atoms * sfb_per; ++i) fill_ue8m0_atom(p.sfb.data() + i * 512, rng);
  for (int t = 0; t < k_atoms; ++t) {
    const uint32_t sfa_col = kSfColumn + 16 * t, sfb_col = sfa_col + 4;
    p.cp(kCpA, uint32_t(t), sfa_col);
    for (int h = 0; h < sfb_per; ++h) p.cp(kCpB, uint32_t(t * sfb_per + h), sfb_col + 4 * h);
    for (uint32_t j = 0; j < 4; ++j)
      p.mma({MmaKind::kMxf8f6f4, a_type, b_type, false, false, j, j, uint32_t(N)}, t, t, 32 * j, sfa_col, sfb_col,
            t > 0 || j > 0);
  }
  return p;
}

// An f16 K loop: K = 64 * k_atoms (4 instructions of K = 16 per 128-byte atom).
Program f16_program(int cta_group, int N, int k_atoms, uint32_t type, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Program p;
  p.allocate(cta_group, N, k_atoms, k_atoms, 0, 0);
  for (size_t i = 0; i < p.A.size(); i += 2) {
    const uint16_t h = exact_16(type, rng);
    p.A[i] = uint8_t(h);
    p.A[i + 1] = uint8_t(h >> 8);
  }
  for (size_t i = 0; i < p.B.size(); i += 2) {
    const uint16_t h = exact_16(type, rng);
    p.B[i] = uint8_t(h);
    p.B[i + 1] = uint8_t(h >> 8);
  }
  for (int t = 0; t < k_atoms; ++t)
    for (uint32_t j = 0; j < 4; ++j)
      p.mma({MmaKind::kF16, type, type, false, false, 0, 0, uint32_t(N)}, t, t, 32 * j, 0, 0, t > 0 || j > 0);
  return p;
}

// ---- kind::mxf8f6f4 ------------------------------------------------------------------------------------------------

struct Mxf8Case {
  int cta_group, N, k_atoms;
  uint32_t a_type, b_type;
  bool warp;
};

class GpuTcgen05Mxf8f6f4 : public ::testing::TestWithParam<Mxf8Case> {};

TEST_P(GpuTcgen05Mxf8f6f4, MatchesThePtxModelBitForBit) {
  GEMM_REQUIRE_GPU();
  const Mxf8Case c = GetParam();
  Program p = mxf8_program(c.cta_group, c.N, c.k_atoms, c.a_type, c.b_type, seed_for("mxf8f6f4_" + std::to_string(c.N)));
  p.warp = c.warp;
  const Outcome r = run(p);
  EXPECT_EQ(r.mismatches(), 0) << "of " << r.got.size() << "\n" << r.first_mismatches(8, p.N);
  EXPECT_EQ(emu::allocated_units(), 0) << "Tensor Memory left allocated";
}

const char* mx_name(uint32_t t) { return t == tcgen05::kMxTypeE4M3 ? "E4M3" : "E5M2"; }
std::string mxf8_case_name(const ::testing::TestParamInfo<Mxf8Case>& info) {
  const Mxf8Case& c = info.param;
  return "cta_group" + std::to_string(c.cta_group) + "_M" + std::to_string(128 * c.cta_group) + "_N" +
         std::to_string(c.N) + "_K" + std::to_string(128 * c.k_atoms) + "_" + mx_name(c.a_type) + "x" +
         mx_name(c.b_type) + (c.warp ? "_warp" : "_one_thread");
}

constexpr uint32_t kE4M3 = tcgen05::kMxTypeE4M3, kE5M2 = tcgen05::kMxTypeE5M2;
const Mxf8Case kMxf8Cases[] = {{1, 128, 1, kE4M3, kE4M3, true}, {1, 256, 2, kE4M3, kE5M2, true},
                               {1, 64, 1, kE5M2, kE4M3, false},  {2, 256, 1, kE5M2, kE5M2, true},
                               {2, 128, 2, kE4M3, kE5M2, false}};
INSTANTIATE_TEST_SUITE_P(Shapes, GpuTcgen05Mxf8f6f4, ::testing::ValuesIn(kMxf8Cases), mxf8_case_name);

TEST(GpuTcgen05Mxf8f6f4Semantics, NegateBitsNegateTheirOperand) {
  GEMM_REQUIRE_GPU();
  Program p = mxf8_program(1, 128, 1, kE4M3, kE5M2, seed_for("mxf8f6f4_negate"));
  for (size_t i = 0; i < p.issued.size(); ++i)
    if (p.issued[i].op == kMma) {  // instruction j: negate A on odd j, negate B on j >= 2
      const uint32_t j = p.issued[i].k_offset / 32;
      p.meaning[i].negate_a = j % 2;
      p.meaning[i].negate_b = j >= 2;
      p.issued[i].idesc = p.meant[i].idesc = p.descriptor(p.meaning[i]);
    }
  const Outcome r = run(p);
  EXPECT_EQ(r.mismatches(), 0) << r.first_mismatches(8, p.N);
}

// Every E4M3 and E5M2 code, as B (one column per code) and as A (one row per code, in a CTA pair):
// each output is a single product, so D shows the decoded value, subnormals, Inf and NaN included.
// Row 5 of A has the NaN scale 0xFF (B side), so its whole row is NaN.
Program decode_program(bool codes_in_b, uint32_t type, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Program p;
  const int cg = codes_in_b ? 1 : 2, N = codes_in_b ? 256 : 64;
  p.allocate(cg, N, 1, 1, 1, (N + 127) / 128);
  const uint32_t other = type == kE4M3 ? kE5M2 : kE4M3;
  // Code c sits at k = c % 32 of its row; the other operand has a finite nonzero value everywhere.
  for (int r = 0; r < (codes_in_b ? N : p.M()); ++r) {
    uint8_t* row = codes_in_b ? p.b_row(r, 0) : p.a_row(r, 0);
    row[r % 32] = uint8_t(r);
  }
  for (int r = 0; r < (codes_in_b ? p.M() : N); ++r) {
    uint8_t* row = codes_in_b ? p.a_row(r, 0) : p.b_row(r, 0);
    for (uint32_t k = 0; k < kAtomBytes; ++k) {
      uint8_t x;
      do x = exact_mx(other, rng);
      while (x == 0);
      row[k] = x;
    }
  }
  for (auto& s : p.sfa) s = 127;
  for (auto& s : p.sfb) s = 127;
  if (codes_in_b) p.sfa[atom_byte(5, 0)] = 0xFF;
  p.cp(kCpA, 0, kSfColumn);
  for (int h = 0; h < p.sfb_atoms; ++h) p.cp(kCpB, uint32_t(h), kSfColumn + 4 + 4 * h);
  const uint32_t a_type = codes_in_b ? other : type, b_type = codes_in_b ? type : other;
  p.mma({MmaKind::kMxf8f6f4, a_type, b_type, false, false, 0, 0, uint32_t(N)}, 0, 0, 0, kSfColumn, kSfColumn + 4, false);
  return p;
}

TEST(GpuTcgen05Mxf8f6f4Semantics, EveryElementCodeDecodesAsDefined) {
  GEMM_REQUIRE_GPU();
  for (const uint32_t type : {kE4M3, kE5M2})
    for (const bool in_b : {true, false}) {
      const Program p = decode_program(in_b, type, seed_for("mxf8f6f4_codes"));
      const Outcome r = run(p);
      EXPECT_EQ(r.mismatches(), 0) << mx_name(type) << (in_b ? " codes in B" : " codes in A") << "\n"
                                   << r.first_mismatches(8, p.N);
      int nans = 0, infs = 0;
      for (float x : r.got) {
        nans += std::isnan(x);
        infs += std::isinf(x);
      }
      EXPECT_GT(nans, 0) << "the NaN codes and the NaN scale must show";
      if (type == kE5M2) EXPECT_GT(infs, 0) << "E5M2's Inf codes must show";
    }
}

// ---- Negative controls: one field broken, the result cannot match ------------------------------------------

// kTypes flips both operand types (kind::f16: BF16 data read as F16; one type alone would be F16 x BF16,
// which the emulator refuses: see the refusals below).
enum class Break { kSfaId, kSfbId, kAType, kBType, kTypes, kKStep, kSwapOperands, kNField, kNegate, kScaleAtoms };
const char* break_name(Break b) {
  switch (b) {
    case Break::kSfaId: return "sfa_id";
    case Break::kSfbId: return "sfb_id";
    case Break::kAType: return "a_type";
    case Break::kBType: return "b_type";
    case Break::kTypes: return "types";
    case Break::kKStep: return "k_step";
    case Break::kSwapOperands: return "swapped_operands";
    case Break::kNField: return "n_field";
    case Break::kNegate: return "negate";
    case Break::kScaleAtoms: return "scale_atoms";
  }
  return "?";
}

// Breaks the issued program (never the meaning the model computes from).
void break_program(Program& p, Break what) {
  for (size_t i = 0; i < p.issued.size(); ++i) {
    Instr& in = p.issued[i];
    if (what == Break::kScaleAtoms && in.op == kCpA) in.atom ^= 1;  // K atom 0's SFA into atom 1's columns
    if (in.op != kMma) continue;
    Meaning m = p.meaning[i];
    switch (what) {
      case Break::kSfaId: m.sfa_id = (m.sfa_id + 1) % 4; break;
      case Break::kSfbId: m.sfb_id = (m.sfb_id + 3) % 4; break;
      case Break::kAType: m.a_type ^= 1; break;  // E4M3 <-> E5M2, F16 <-> BF16
      case Break::kBType: m.b_type ^= 1; break;
      case Break::kTypes:
        m.a_type ^= 1;
        m.b_type ^= 1;
        break;
      case Break::kNField:
        if (in.accumulate) m.n /= 2;  // the first instruction writes every column; the rest only half
        break;
      case Break::kNegate: m.negate_a = !m.negate_a; break;
      case Break::kKStep: in.k_offset /= 2; break;  // 16 bytes per instruction instead of 32
      case Break::kSwapOperands: in.swap_ab = 1; break;
      case Break::kScaleAtoms: break;
    }
    in.idesc = p.descriptor(m);
  }
}

struct BreakCase {
  MmaKind kind;
  Break what;
};

// M = N = 128 so that swapped A and B descriptors still name whole tiles; A and B differ in data and
// (MXFP8) in format, so a swapped operand changes the values.
Program broken_program(const BreakCase& c) {
  const int k_atoms = c.what == Break::kScaleAtoms ? 2 : 1;
  Program p = c.kind == MmaKind::kMxf8f6f4 ? mxf8_program(1, 128, k_atoms, kE4M3, kE5M2, seed_for("mxf8f6f4_negative"))
                                           : f16_program(1, 128, k_atoms, tcgen05::kF16TypeBF16, seed_for("f16_negative"));
  break_program(p, c.what);
  return p;
}

// The program as issued, read back the way the hardware reads it: its instructions are what is meant,
// their meaning decoded from the issued descriptors.
Program as_issued(const Program& p) {
  Program q = p;
  q.meant = q.issued;
  for (size_t i = 0; i < q.issued.size(); ++i) {
    const Instr& in = q.issued[i];
    Meaning& m = q.meaning[i];
    if (in.op != kMma) continue;
    if (in.kind == uint32_t(MmaKind::kMxf8f6f4)) {
      const tcgen05::Mxf8f6f4InstrDescriptor d = tcgen05::decode_mxf8f6f4_instr_descriptor(in.idesc);
      m = {MmaKind::kMxf8f6f4, d.a_type, d.b_type, d.negate_a != 0, d.negate_b != 0, d.sfa_id, d.sfb_id, d.n};
    } else if (in.kind == uint32_t(MmaKind::kF16)) {
      const tcgen05::F16InstrDescriptor d = tcgen05::decode_f16_instr_descriptor(in.idesc);
      m = {MmaKind::kF16, d.a_type, d.b_type, d.negate_a != 0, d.negate_b != 0, 0, 0, d.n};
    } else {
      const tcgen05::InstrDescriptor d = tcgen05::decode_instr_descriptor(in.idesc);
      m = {MmaKind::kMxf4Nvf4, d.a_type, d.b_type, d.negate_a != 0, d.negate_b != 0, 0, 0, d.n};
    }
  }
  return q;
}

class GpuTcgen05KindNegative : public ::testing::TestWithParam<BreakCase> {};

TEST_P(GpuTcgen05KindNegative, BrokenFieldGivesAWrongResult) {
  GEMM_REQUIRE_GPU();
  const Program p = broken_program(GetParam());
  const Outcome r = run(p);
  EXPECT_GT(r.mismatches(), int64_t(r.got.size()) / 4) << "broken " << break_name(GetParam().what) << " passed";
}

std::string break_case_name(const ::testing::TestParamInfo<BreakCase>& info) {
  return std::string(info.param.kind == MmaKind::kMxf8f6f4 ? "mxf8f6f4_" : "f16_") + break_name(info.param.what);
}

const BreakCase kBreakCases[] = {
    {MmaKind::kMxf8f6f4, Break::kSfaId},        {MmaKind::kMxf8f6f4, Break::kSfbId},  {MmaKind::kMxf8f6f4, Break::kAType},
    {MmaKind::kMxf8f6f4, Break::kBType},        {MmaKind::kMxf8f6f4, Break::kKStep},  {MmaKind::kMxf8f6f4, Break::kSwapOperands},
    {MmaKind::kMxf8f6f4, Break::kNField},       {MmaKind::kMxf8f6f4, Break::kNegate}, {MmaKind::kMxf8f6f4, Break::kScaleAtoms},
    {MmaKind::kF16, Break::kTypes},             {MmaKind::kF16, Break::kKStep},       {MmaKind::kF16, Break::kSwapOperands},
    {MmaKind::kF16, Break::kNField},            {MmaKind::kF16, Break::kNegate}};
INSTANTIATE_TEST_SUITE_P(Fields, GpuTcgen05KindNegative, ::testing::ValuesIn(kBreakCases), break_case_name);

// ---- kind::f16 ------------------------------------------------------------------------------------------------------

struct F16Case {
  int cta_group, N, k_atoms;
  uint32_t type;
  bool warp;
};

class GpuTcgen05F16 : public ::testing::TestWithParam<F16Case> {};

TEST_P(GpuTcgen05F16, MatchesThePtxModelBitForBit) {
  GEMM_REQUIRE_GPU();
  const F16Case c = GetParam();
  Program p = f16_program(c.cta_group, c.N, c.k_atoms, c.type, seed_for("f16_" + std::to_string(c.N)));
  p.warp = c.warp;
  const Outcome r = run(p);
  EXPECT_EQ(r.mismatches(), 0) << "of " << r.got.size() << "\n" << r.first_mismatches(8, p.N);
  EXPECT_EQ(emu::allocated_units(), 0) << "Tensor Memory left allocated";
}

std::string f16_case_name(const ::testing::TestParamInfo<F16Case>& info) {
  const F16Case& c = info.param;
  return "cta_group" + std::to_string(c.cta_group) + "_M" + std::to_string(128 * c.cta_group) + "_N" +
         std::to_string(c.N) + "_K" + std::to_string(64 * c.k_atoms) + (c.type == tcgen05::kF16TypeF16 ? "_F16" : "_BF16") +
         (c.warp ? "_warp" : "_one_thread");
}

const F16Case kF16Cases[] = {{1, 128, 1, tcgen05::kF16TypeBF16, true}, {1, 256, 2, tcgen05::kF16TypeF16, true},
                             {1, 64, 1, tcgen05::kF16TypeBF16, false}, {2, 256, 1, tcgen05::kF16TypeBF16, true},
                             {2, 128, 2, tcgen05::kF16TypeF16, false}};
INSTANTIATE_TEST_SUITE_P(Shapes, GpuTcgen05F16, ::testing::ValuesIn(kF16Cases), f16_case_name);

// ---- Kinds mixed in one accumulator ------------------------------------------------------------------------------------

// Appends an f16 K loop (BF16, k_atoms atoms after A's and B's existing ones) that accumulates into D.
void append_f16(Program& p, int first_atom, int k_atoms, bool accumulate_first, std::mt19937_64& rng) {
  for (int r = 0; r < p.M(); ++r)
    for (int t = 0; t < k_atoms; ++t)
      for (uint32_t k = 0; k < kAtomBytes; k += 2) {
        const uint16_t h = exact_16(tcgen05::kF16TypeBF16, rng);
        p.a_row(r, first_atom + t)[k] = uint8_t(h);
        p.a_row(r, first_atom + t)[k + 1] = uint8_t(h >> 8);
      }
  for (int r = 0; r < p.N; ++r)
    for (int t = 0; t < k_atoms; ++t)
      for (uint32_t k = 0; k < kAtomBytes; k += 2) {
        const uint16_t h = exact_16(tcgen05::kF16TypeBF16, rng);
        p.b_row(r, first_atom + t)[k] = uint8_t(h);
        p.b_row(r, first_atom + t)[k + 1] = uint8_t(h >> 8);
      }
  for (int t = 0; t < k_atoms; ++t)
    for (uint32_t j = 0; j < 4; ++j)
      p.mma({MmaKind::kF16, tcgen05::kF16TypeBF16, tcgen05::kF16TypeBF16, false, false, 0, 0, uint32_t(p.N)},
            uint32_t(first_atom + t), uint32_t(first_atom + t), 32 * j, 0, 0, accumulate_first || t > 0 || j > 0);
}

// NVFP4: an exact-tier problem (common/harness/problems.h) of K = 256, one 128-byte atom per row and
// 4 instructions of K = 64, scales block16 from the blocked layout, each instruction its own scale
// columns. Then an f16 K loop of K = 64 (one atom, 4 instructions) into the same accumulator.
struct MixedProgram {
  Program p;
  HostNvfp4Problem nvfp4;
};
MixedProgram nvfp4_then_f16(int cta_group, int N, bool accumulate_f16, uint64_t seed) {
  MixedProgram mp;
  Program& p = mp.p;
  constexpr int kK = 256, kSteps = kK / 64;
  const int sfb_per = (N + 127) / 128;
  p.allocate(cta_group, N, 2, 2, kSteps, kSteps * sfb_per);
  mp.nvfp4 = make_nvfp4_problem(p.M(), N, kK, 1, Tier::kExact, seed);
  const HostNvfp4Problem& q = mp.nvfp4;
  for (int r = 0; r < p.M(); ++r) std::memcpy(p.a_row(r, 0), q.a.data.data() + size_t(r) * kK / 2, kK / 2);
  for (int r = 0; r < N; ++r) std::memcpy(p.b_row(r, 0), q.b.data.data() + size_t(r) * kK / 2, kK / 2);
  // Blocked tiles: tile (row block, K step) is one instruction's 512-byte atom.
  const int tiles_per_row_block = int(sf_padded_cols(kK) / 4);
  for (int v = 0; v < cta_group; ++v)
    for (int j = 0; j < kSteps; ++j)
      std::memcpy(p.sfa.data() + (size_t(v) * kSteps + j) * 512, q.a.sf.data() + (size_t(v) * tiles_per_row_block + j) * 512, 512);
  for (int j = 0; j < kSteps; ++j)
    for (int h = 0; h < sfb_per; ++h)
      std::memcpy(p.sfb.data() + (size_t(j) * sfb_per + h) * 512, q.b.sf.data() + (size_t(h) * tiles_per_row_block + j) * 512, 512);
  for (int j = 0; j < kSteps; ++j) {
    const uint32_t sfa_col = kSfColumn + 16 * j, sfb_col = sfa_col + 4;
    p.cp(kCpA, uint32_t(j), sfa_col);
    for (int h = 0; h < sfb_per; ++h) p.cp(kCpB, uint32_t(j * sfb_per + h), sfb_col + 4 * h);
    p.mma({MmaKind::kMxf4Nvf4, tcgen05::kTypeE2M1, tcgen05::kTypeE2M1, false, false, 0, 0, uint32_t(N)}, 0, 0,
          32 * uint32_t(j), sfa_col, sfb_col, j > 0);
  }
  std::mt19937_64 rng(seed ^ 0x5A5A);
  append_f16(p, 1, 1, accumulate_f16, rng);
  return mp;
}

// The FP64 reference of the mixed program, from the project's NVFP4 reference plus the f16 products,
// independent of the CPU model above (which must agree with it).
std::vector<double> mixed_reference(const MixedProgram& mp, bool accumulate_f16) {
  const Program& p = mp.p;
  const ReferenceOutput nvfp4 = reference_gemm(mp.nvfp4.host_args());
  std::vector<double> ref(size_t(p.M()) * p.N);
  for (int m = 0; m < p.M(); ++m)
    for (int n = 0; n < p.N; ++n) {
      double s = accumulate_f16 ? nvfp4.value[size_t(m) * p.N + n] : 0.0;
      const uint8_t* a = p.a_row(m, 1);
      const uint8_t* b = p.b_row(n, 1);
      for (uint32_t k = 0; k < kAtomBytes; k += 2)
        s += double(bf16_bits_to_float(uint16_t(a[k] | a[k + 1] << 8))) * double(bf16_bits_to_float(uint16_t(b[k] | b[k + 1] << 8)));
      ref[size_t(m) * p.N + n] = s;
    }
  return ref;
}

struct MixedCase {
  int cta_group, N;
  bool warp;
};

class GpuTcgen05MixedKinds : public ::testing::TestWithParam<MixedCase> {};

TEST_P(GpuTcgen05MixedKinds, Nvfp4KLoopThenF16IsExactAgainstFp64) {
  GEMM_REQUIRE_GPU();
  const MixedCase c = GetParam();
  MixedProgram mp = nvfp4_then_f16(c.cta_group, c.N, true, seed_for("mixed_" + std::to_string(c.N)));
  mp.p.warp = c.warp;
  const std::vector<double> ref = mixed_reference(mp, true);
  const std::vector<double> cpu_model = model(mp.p);
  ASSERT_EQ(cpu_model, ref) << "the CPU model and the FP64 reference disagree";
  const Outcome r{mp.p.cta_group == 1 ? launch<1>(mp.p) : launch<2>(mp.p), ref};
  EXPECT_EQ(r.mismatches(), 0) << r.first_mismatches(8, mp.p.N);
  // Both kinds contribute: neither alone matches.
  const ReferenceOutput nvfp4_only = reference_gemm(mp.nvfp4.host_args());
  int64_t differ = 0;
  for (size_t i = 0; i < ref.size(); ++i) differ += ref[i] != nvfp4_only.value[i];
  EXPECT_GT(differ, int64_t(ref.size()) / 2);
}

std::string mixed_case_name(const ::testing::TestParamInfo<MixedCase>& info) {
  return "cta_group" + std::to_string(info.param.cta_group) + "_N" + std::to_string(info.param.N) +
         (info.param.warp ? "_warp" : "_one_thread");
}

const MixedCase kMixedCases[] = {{1, 128, true}, {1, 256, false}, {2, 256, true}};
INSTANTIATE_TEST_SUITE_P(Shapes, GpuTcgen05MixedKinds, ::testing::ValuesIn(kMixedCases), mixed_case_name);

TEST(GpuTcgen05MixedKindsInputD, F16WithEnableInputDOffDiscardsTheNvfp4Result) {
  GEMM_REQUIRE_GPU();
  MixedProgram mp = nvfp4_then_f16(1, 128, false, seed_for("mixed_input_d"));
  const std::vector<double> ref = mixed_reference(mp, false);
  const Outcome r{launch<1>(mp.p), ref};
  EXPECT_EQ(r.mismatches(), 0) << r.first_mismatches(8, mp.p.N);
}

// MXFP8 then f16 into one accumulator (the MXFP8 K loop's atom and the f16 K loop's side by side).
Program mxf8_then_f16() {
  Program p = mxf8_program(1, 128, 1, kE4M3, kE5M2, seed_for("mixed_mxf8"));
  // Widen A and B by one atom for the f16 part.
  Program q;
  q.allocate(1, 128, 2, 2, p.sfa_atoms, p.sfb_atoms);
  for (int r = 0; r < q.M(); ++r) std::memcpy(q.a_row(r, 0), p.a_row(r, 0), kAtomBytes);
  for (int r = 0; r < q.N; ++r) std::memcpy(q.b_row(r, 0), p.b_row(r, 0), kAtomBytes);
  q.sfa = p.sfa;
  q.sfb = p.sfb;
  q.issued = p.issued;
  q.meant = p.meant;
  q.meaning = p.meaning;
  std::mt19937_64 rng(seed_for("mixed_mxf8_f16"));
  append_f16(q, 1, 1, true, rng);
  return q;
}

TEST(GpuTcgen05MixedKindsMxf8, Mxf8f6f4KLoopThenF16IsExact) {
  GEMM_REQUIRE_GPU();
  const Program q = mxf8_then_f16();
  const Outcome r = run(q);
  EXPECT_EQ(r.mismatches(), 0) << r.first_mismatches(8, q.N);
}

// ---- The CPU model and the data, checked without a GPU -------------------------------------------------------

// The model's block16 path (scale words from the cp model, byte s for the s-th 16 values) against the
// project's NVFP4 reference, on the mixed programs, both ways of entering the f16 part.
TEST(Tcgen05KindModel, AgreesWithTheNvfp4ReferenceOnMixedPrograms) {
  for (const MixedCase& c : kMixedCases)
    for (const bool accumulate : {true, false}) {
      const MixedProgram mp = nvfp4_then_f16(c.cta_group, c.N, accumulate, seed_for("mixed_" + std::to_string(c.N)));
      EXPECT_EQ(model(mp.p), mixed_reference(mp, accumulate)) << mixed_case_name({c, 0}) << " accumulate " << accumulate;
    }
}

// Each negative control, computed by the model as the hardware would read the broken instructions
// (their decoded descriptors, their K offsets, swapped operands, scale atoms), changes most outputs:
// the GPU test of each then cannot pass by accident. And an unbroken program read back from its
// descriptors is the program meant (the builders and decoders agree).
TEST(Tcgen05KindModel, EachNegativeControlChangesMostOutputs) {
  for (const BreakCase& c : kBreakCases) {
    const Program p = broken_program(c);
    const std::vector<double> meant = model(p), issued = model(as_issued(p));
    int64_t differ = 0;
    for (size_t i = 0; i < meant.size(); ++i) differ += !(meant[i] == issued[i]);
    EXPECT_GT(differ, int64_t(meant.size()) / 4) << break_case_name({c, 0});
  }
  const Program whole = mxf8_program(1, 128, 2, kE4M3, kE5M2, seed_for("mxf8f6f4_negative"));
  EXPECT_EQ(model(as_issued(whole)), model(whole));
  const MixedProgram mixed = nvfp4_then_f16(1, 128, true, seed_for("mixed_128"));
  EXPECT_EQ(model(as_issued(mixed.p)), model(mixed.p));
}

// Every program the GPU tests compare bit for bit is exact in FP32.
TEST(Tcgen05KindModel, TestDataIsExactInFp32) {
  std::vector<std::pair<std::string, Program>> programs;
  for (const Mxf8Case& c : kMxf8Cases)
    programs.emplace_back(mxf8_case_name({c, 0}),
                          mxf8_program(c.cta_group, c.N, c.k_atoms, c.a_type, c.b_type, seed_for("mxf8f6f4_" + std::to_string(c.N))));
  for (const F16Case& c : kF16Cases)
    programs.emplace_back(f16_case_name({c, 0}), f16_program(c.cta_group, c.N, c.k_atoms, c.type, seed_for("f16_" + std::to_string(c.N))));
  for (const MixedCase& c : kMixedCases)
    programs.emplace_back("mixed " + mixed_case_name({c, 0}),
                          nvfp4_then_f16(c.cta_group, c.N, true, seed_for("mixed_" + std::to_string(c.N))).p);
  programs.emplace_back("mxf8 then f16", mxf8_then_f16());
  for (const uint32_t type : {kE4M3, kE5M2})
    for (const bool in_b : {true, false})
      programs.emplace_back(std::string("codes of ") + mx_name(type), decode_program(in_b, type, seed_for("mxf8f6f4_codes")));
  for (const auto& [name, p] : programs) {
    bool exact = true;
    model(p, &exact);
    EXPECT_TRUE(exact) << name;
  }
}

// ---- What the emulator refuses, with its message (emulator only: on hardware these are undefined) -----------

struct Refusal {
  const char* name;
  MmaKind kind;
  uint32_t idesc;
  uint32_t sfa_col;   // mxf8f6f4: scale columns (relative to the allocation)
  const char* message;  // the start of the message (no regular-expression characters)
};

uint32_t mx_ok() { return tcgen05::mxf8f6f4_instr_descriptor(kE4M3, kE4M3, 128, 64, 0, 0); }
uint32_t f16_ok() { return tcgen05::f16_instr_descriptor(tcgen05::kF16TypeBF16, tcgen05::kF16TypeBF16, 128, 64); }

const Refusal kRefusals[] = {
    {"mxf8f6f4_ue4m3_scales", MmaKind::kMxf8f6f4, mx_ok() & ~(1u << 23), 32, "kind::mxf8f6f4: scales must be UE8M0"},
    {"mxf8f6f4_reserved_bit", MmaKind::kMxf8f6f4, mx_ok() | 1u << 31, 32, "kind::mxf8f6f4: reserved instruction-descriptor bits"},
    {"mxf8f6f4_m256_cta_group1", MmaKind::kMxf8f6f4, tcgen05::mxf8f6f4_instr_descriptor(0, 0, 256, 64, 0, 0), 32,
     "kind::mxf8f6f4: M must be 128 with cta_group::1"},
    {"mxf8f6f4_n_out_of_table", MmaKind::kMxf8f6f4, mx_ok() | 0x3Fu << 17, 32, "kind::mxf8f6f4: N must be"},
    {"mxf8f6f4_sparse", MmaKind::kMxf8f6f4, mx_ok() | 1u << 2, 32, "kind::mxf8f6f4: sparse MMA is not modelled"},
    {"mxf8f6f4_e2m1", MmaKind::kMxf8f6f4, tcgen05::mxf8f6f4_instr_descriptor(tcgen05::kMxTypeE2M1, 0, 128, 64, 0, 0), 32,
     "kind::mxf8f6f4: E2M3, E3M2 and E2M1 operands are not modelled"},
    {"mxf8f6f4_transpose", MmaKind::kMxf8f6f4, mx_ok() | 1u << 15, 32, "kind::mxf8f6f4: transposed"},
    {"mxf8f6f4_odd_scale_column", MmaKind::kMxf8f6f4, mx_ok(), 33, "tcgen05.mma: scale-factor addresses must be 2-column aligned"},
    {"f16_f16_d", MmaKind::kF16, f16_ok() & ~(0x3u << 4) & ~(0x3Fu << 7), 0, "kind::f16: an F16 D is not modelled"},
    {"f16_mixed_types", MmaKind::kF16, f16_ok() & ~(0x7u << 10), 0, "kind::f16: F16 x BF16 is not modelled"},
    {"f16_m64", MmaKind::kF16, tcgen05::f16_instr_descriptor(1, 1, 64, 64), 0,
     "kind::f16: cta_group::1 is modelled for M = 128 only"},
    {"f16_m256_cta_group1", MmaKind::kF16, tcgen05::f16_instr_descriptor(1, 1, 256, 64), 0, "kind::f16: M must be 64 or 128"},
    {"f16_tf32_type", MmaKind::kF16, f16_ok() | 0x2u << 7, 0, "kind::f16: A and B types must be F16"},
    {"f16_max_shift", MmaKind::kF16, f16_ok() | 1u << 30, 0, "kind::f16: the maximum shift"},
    {"f16_transpose", MmaKind::kF16, f16_ok() | 1u << 16, 0, "kind::f16: transposed"},
    {"f16_sparse", MmaKind::kF16, f16_ok() | 1u << 2, 0, "kind::f16: sparse MMA is not modelled"},
};

__global__ void refusal_kernel(uint32_t kind, uint32_t idesc, uint32_t sf_col) {
  ProtocolScope protocol_scope;  // the protocol checker sees each thread enter and leave (no code in release)
  __shared__ uint32_t tmem_base;
  if (threadIdx.x < 32) tcgen05_alloc<1>(&tmem_base, 128);
  cta_sync();  // a CTA barrier the checker sees
  const uint32_t tmem = tmem_base;
  const uint64_t desc = tcgen05::kmajor_sw128_descriptor(0);
  if (threadIdx.x < 32) {
    if (kind == uint32_t(MmaKind::kMxf8f6f4))
      tcgen05_mma_mxf8f6f4_warp<1>(tmem, desc, desc, idesc, tmem + sf_col, tmem + sf_col + 4, false);
    else
      tcgen05_mma_f16_warp<1>(tmem, desc, desc, idesc, false);
  }
  cta_sync();
  if (threadIdx.x < 32) tcgen05_dealloc<1>(tmem, 128);
}

[[noreturn]] void run_refusal_and_exit(const Refusal& r) {
  bind_device_state();  // this file's deadline, checker and emulator (common/device_state.h)
  // What is tested is the emulator's own refusal, not the protocol (the kernel issues an MMA on
  // operands nothing loaded): the checker is off.
  protocol::set_mode(protocol::kOff);
  std::fflush(stdout);
  dup2(2, 1);  // the trap message (device printf, stdout) to stderr, which the death test matches
  refusal_kernel<<<1, 64>>>(uint32_t(r.kind), r.idesc, r.sfa_col);
  testing::exit_with_kernel_status();
}

class GpuTcgen05KindRefusalDeathTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(GpuTcgen05KindRefusalDeathTest, TrapsWithItsMessage) {
  GEMM_REQUIRE_GPU();
  if (gpu_info().tcgen05_native()) GTEST_SKIP() << "refusals are the emulator's; hardware behaviour is undefined";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Refusal& r = GetParam();
  const std::string prefix = std::string(r.message).rfind("tcgen05.mma: ", 0) == 0 ? "" : "tcgen05.mma: ";
  EXPECT_EXIT(run_refusal_and_exit(r), ::testing::ExitedWithCode(testing::kKernelFailedExit),
              std::string("tcgen05 emulator: ") + prefix + r.message + "(.|\\n)*kernel ended with: .+");
}

INSTANTIATE_TEST_SUITE_P(Descriptors, GpuTcgen05KindRefusalDeathTest, ::testing::ValuesIn(kRefusals),
                         [](const ::testing::TestParamInfo<Refusal>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace gemm
