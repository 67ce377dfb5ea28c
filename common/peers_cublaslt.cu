// cuBLASLt's NVFP4 GEMM as a peer of the NVFP4 stages, and its MXFP8 GEMM as a peer of the MXFP8
// stage (both declared in common/peers.h).
//
// The mapping. cuBLASLt is column-major and computes D (m x n) = alpha * op(X) op(Y). The project's C
// is M x N row-major, which is the same memory as the column-major C^T (N x M), and
//   C^T = B * A^T      with m = N, n = M, k = K:
//   X = B: row-major N x K, K contiguous = column-major K x N        -> op(X) = X^T   (CUBLAS_OP_T)
//   Y = A: row-major M x K, K contiguous = column-major K x M = A^T  -> op(Y) = Y     (CUBLAS_OP_N)
//   D = C: column-major N x M, leading dimension N
// That is the "TN" form cuBLASLt's narrow-precision kernels require. Each operand's block scales
// travel with it: X's scale pointer (CUBLASLT_MATMUL_DESC_A_SCALE_POINTER) is SFB, Y's (..._B_...) is
// SFA. The blocked layout of common/sf_layout.h is cuBLAS's "1D block scaling factors layout" for a
// rows x K operand whose K is contiguous, which both X and Y are. Rows, columns and leading dimensions
// of FP4 matrices count values, not bytes (cuBLAS takes unpacked k, lda, ldb).
//
// MXFP8 is the same call with other names, all from CUDA 13.0's cublasLt.h: the operand types
// CUDA_R_8F_E4M3 / CUDA_R_8F_E5M2 (library_types.h), each operand's own (X's is B's type, Y's is A's);
// the scale mode CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 ("scaling factor tensor elements have type
// CUDA_R_8F_UE8M0 and the block size is 32 elements") for CUBLASLT_MATMUL_DESC_A_SCALE_MODE and
// CUBLASLT_MATMUL_DESC_B_SCALE_MODE, with CUBLASLT_MATMUL_DESC_A_SCALE_POINTER = SFB and
// CUBLASLT_MATMUL_DESC_B_SCALE_POINTER = SFA as for NVFP4; the layout is the same blocked layout with
// 32 values per scale column (sf_offset(row, k / 32, K, 32); nvmath-python's to_block_scale says the
// block size is the only difference between the MXFP8 and NVFP4 layouts); C and D in CUDA_R_32F or
// CUDA_R_16BF (the kind's c_type), compute CUBLAS_COMPUTE_32F, scale type CUDA_R_32F, alpha 1, beta 0.
//
// Batches. cuBLASLt has no attribute for the batch stride of a block-scale tensor, so instead of one
// strided-batched call (whose scale addressing would be a guess) the L batches are L calls, each with
// its own data and scale pointers: exactly the single-matrix use that cuBLAS documents.
//
// Shapes cuBLASLt refuses. Its narrow-precision kernels have alignment rules on dimensions and
// pointers (TMA wants 16-byte rows and addresses), and the project's contract allows any M and N and
// only 2-byte-aligned C. A plan therefore tries, through the heuristic alone (nothing runs), first the
// call as it is and then ever more padded versions of it: C written to an aligned staging buffer and
// copied out with cudaMemcpy2DAsync, then N and M rounded up to 32 and to 128 with the operands
// copied into zero-padded buffers. Padding rows of A and B never change the M x N block that is
// copied out (output (m, n) reads only row m of A and row n of B), and their scales exist: the
// blocked layout pads every operand's scale rows to a multiple of 128 already.
//
// Plans are cached per shape and alignment class, so after the first call for a shape a launch does
// no allocation and no synchronisation (it can be captured in a CUDA graph).
#include "common/peers.h"

#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/cuda_check.h"
#include "common/device_info.h"
#include "common/sf_layout.h"

namespace gemm {
namespace {

// Workspace offered to cuBLASLt (split-K and stream-K algorithms use it), allocated once per process.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;
// Alignment cudaMalloc gives, and the most that cuBLASLt's alignment preferences ask about.
constexpr unsigned kMaxAlignment = 256;

std::string status_text(cublasStatus_t s) {
  return std::string(cublasLtGetStatusName(s)) + " (" + cublasLtGetStatusString(s) + ")";
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLASLt: ") + what + " failed: " + status_text(s));
}

// How an operand's scales are given (the scale mode of both operands).
enum class Scales {
  kTensorFp32,  // one FP32 scale per operand (or none): cuBLASLt's default, SCALAR_32F
  kVec16Ue4m3,  // NVFP4: CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3 tensors, blocked layout
  kVec32Ue8m0,  // MXFP8: CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 tensors, blocked layout
};

// The element formats of one call. NVFP4 and MXFP8 are the peers; FP8 E4M3 with per-tensor FP32
// scales is the same machinery in a form that Hopper's cuBLASLt also runs (cublaslt_fp8_selftest).
struct Format {
  cudaDataType_t a_type, b_type;  // the project's A and B (cuBLASLt's B and A)
  int values_per_byte;            // of both operands
  Scales scales;
  cudaDataType_t d_type;  // C and D: CUDA_R_16F, CUDA_R_16BF or CUDA_R_32F
  const char* name;       // "NVFP4", "MXFP8", ...: the messages name it with the types
  auto key() const { return std::make_tuple(int(a_type), int(b_type), values_per_byte, int(scales), int(d_type)); }
};
constexpr Format kNvfp4Format{CUDA_R_4F_E2M1, CUDA_R_4F_E2M1, 2, Scales::kVec16Ue4m3, CUDA_R_16F, "NVFP4"};
constexpr Format kFp8Format{CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, 1, Scales::kTensorFp32, CUDA_R_16F, "FP8 E4M3"};

cudaDataType_t lt_type(Mxfp8Element t) { return t == Mxfp8Element::kE5M2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3; }
cudaDataType_t lt_type(Mxfp8Output t) { return t == Mxfp8Output::kBf16 ? CUDA_R_16BF : CUDA_R_32F; }
Format mxfp8_format(Mxfp8Element a, Mxfp8Element b, Mxfp8Output c) {
  return {lt_type(a), lt_type(b), 1, Scales::kVec32Ue8m0, lt_type(c), "MXFP8"};
}

const char* type_name(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_4F_E2M1: return "E2M1";
    case CUDA_R_8F_E4M3: return "E4M3";
    case CUDA_R_8F_E5M2: return "E5M2";
    case CUDA_R_16F: return "FP16";
    case CUDA_R_16BF: return "BF16";
    case CUDA_R_32F: return "FP32";
    default: return "?";
  }
}
// "MXFP8 (E5M2 x E4M3 -> BF16)": A's type first, as the project writes the product.
std::string format_text(const Format& f) {
  return std::string(f.name) + " (" + type_name(f.a_type) + " x " + type_name(f.b_type) + " -> " +
         type_name(f.d_type) + ")";
}
int64_t d_element_bytes(const Format& f) { return f.d_type == CUDA_R_32F ? 4 : 2; }

// One call in the project's row-major terms (gemm_api.h), any Format.
struct LtProblem {
  int M, N, K, L;
  const uint8_t* A;  // M x K values per batch, K contiguous
  const uint8_t* B;  // N x K values per batch, K contiguous
  const uint8_t* sfa;  // scales of A for batch l at sfa + l * sfa_stride (may be null for FP8)
  const uint8_t* sfb;
  int64_t sfa_stride, sfb_stride;
  float alpha;
  void* C;  // M x N per batch, row-major, of the Format's d_type
};

int64_t operand_bytes(const Format& f, int64_t rows, int64_t K) { return rows * K / f.values_per_byte; }

// The largest power of two (up to 256) that divides the address of every batch's matrix.
unsigned alignment_of(const void* base, int64_t batch_stride_bytes, int L) {
  uint64_t bits = uint64_t(reinterpret_cast<uintptr_t>(base));
  if (L > 1) bits |= uint64_t(batch_stride_bytes);
  unsigned a = 1;
  while (a < kMaxAlignment && (bits & a) == 0) a <<= 1;
  return a;
}

// ---- cuBLASLt objects ----------------------------------------------------------------------------

struct DescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { cublasLtMatmulDescDestroy(d); }
};
struct LayoutDeleter {
  void operator()(cublasLtMatrixLayoutOpaque_t* l) const { cublasLtMatrixLayoutDestroy(l); }
};
struct PrefDeleter {
  void operator()(cublasLtMatmulPreferenceOpaque_t* p) const { cublasLtMatmulPreferenceDestroy(p); }
};
using Desc = std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDeleter>;
using Layout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutDeleter>;
using Pref = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, PrefDeleter>;

// One process-wide handle, created on first use and never destroyed (like the cuBLAS handle in
// peers.cu: destruction from a static destructor can run after the CUDA runtime has shut down).
// Callers hold lt_mutex().
cublasLtHandle_t lt_handle() {
  static cublasLtHandle_t h = [] {
    cublasLtHandle_t created = nullptr;
    check(cublasLtCreate(&created), "cublasLtCreate");
    return created;
  }();
  return h;
}

std::mutex& lt_mutex() {
  static std::mutex m;
  return m;
}

// What is handed to cuBLASLt for one problem shape: its m_rows x K and n_rows x K operands (M' >= M
// rows of A, N' >= N rows of B), and whether D goes to a staging buffer instead of C.
struct Geometry {
  int m_rows, n_rows;
  bool stage_c;
  bool operator==(const Geometry& o) const { return m_rows == o.m_rows && n_rows == o.n_rows && stage_c == o.stage_c; }
};

int round_up(int x, int g) { return (x + g - 1) / g * g; }

// The candidates in order of preference; the first that cuBLASLt's heuristic accepts is used.
std::vector<Geometry> candidate_geometries(int M, int N) {
  const Geometry all[] = {
      {M, N, false},                               // as it is
      {M, N, true},                                // C staged (aligned, ld = N)
      {M, round_up(N, 32), true},                  // N (cuBLASLt's m, and C's ld) to 32 values
      {round_up(M, 32), round_up(N, 32), true},    // M (cuBLASLt's n) too
      {round_up(M, 128), round_up(N, 128), true},  // both to the scale tile
  };
  std::vector<Geometry> out;
  for (const Geometry& g : all)
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  return out;
}

// The matmul descriptor and the three layouts for one geometry (see the mapping at the top).
struct Descriptors {
  Desc desc;
  Layout x, y, d;  // X = B (K x N' column-major, op T), Y = A (K x M', op N), D = C^T (N' x M')
};

Descriptors make_descriptors(const Format& f, const Geometry& g, int K) {
  Descriptors r;
  cublasLtMatmulDesc_t desc = nullptr;
  check(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  r.desc.reset(desc);
  const int32_t trans_x = CUBLAS_OP_T, trans_y = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_x, sizeof trans_x), "set TRANSA");
  check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &trans_y, sizeof trans_y), "set TRANSB");
  if (f.scales != Scales::kTensorFp32) {
    const int32_t mode = f.scales == Scales::kVec16Ue4m3 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3
                                                         : CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
    check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode),
          "set A_SCALE_MODE");
    check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode),
          "set B_SCALE_MODE");
  }
  cublasLtMatrixLayout_t l = nullptr;
  check(cublasLtMatrixLayoutCreate(&l, f.b_type, uint64_t(K), uint64_t(g.n_rows), int64_t(K)), "layout of B");
  r.x.reset(l);
  check(cublasLtMatrixLayoutCreate(&l, f.a_type, uint64_t(K), uint64_t(g.m_rows), int64_t(K)), "layout of A");
  r.y.reset(l);
  check(cublasLtMatrixLayoutCreate(&l, f.d_type, uint64_t(g.n_rows), uint64_t(g.m_rows), int64_t(g.n_rows)),
        "layout of C");
  r.d.reset(l);
  return r;
}

// X's scales are B's, Y's are A's.
void set_scale_pointers(cublasLtMatmulDesc_t desc, const void* sfa, const void* sfb) {
  check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sfb, sizeof sfb),
        "set A_SCALE_POINTER (SFB)");
  check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sfa, sizeof sfa),
        "set B_SCALE_POINTER (SFA)");
}

struct Alignments {
  unsigned a, b, c;  // bytes, of every batch's A, B and C as cuBLASLt will see them
};

// Asks the heuristic for the best algorithm; SUCCESS and *algo set, or the reason it has none.
cublasStatus_t best_algorithm(const Descriptors& d, const Alignments& al, cublasLtMatmulHeuristicResult_t* out) {
  cublasLtMatmulPreference_t p = nullptr;
  check(cublasLtMatmulPreferenceCreate(&p), "cublasLtMatmulPreferenceCreate");
  Pref pref(p);
  const uint64_t ws = kWorkspaceBytes;
  const uint32_t align_x = al.b, align_y = al.a, align_c = al.c;  // cuBLASLt's A is B, its B is A
  check(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
        "set MAX_WORKSPACE_BYTES");
  check(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_x, sizeof align_x),
        "set MIN_ALIGNMENT_A_BYTES");
  check(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_y, sizeof align_y),
        "set MIN_ALIGNMENT_B_BYTES");
  check(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c, sizeof align_c),
        "set MIN_ALIGNMENT_C_BYTES");
  check(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c, sizeof align_c),
        "set MIN_ALIGNMENT_D_BYTES");
  int found = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lt_handle(), d.desc.get(), d.x.get(), d.y.get(), d.d.get(),
                                                          d.d.get(), p, 1, out, &found);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  if (found < 1) return CUBLAS_STATUS_NOT_SUPPORTED;
  return out->state;
}

// ---- plans ---------------------------------------------------------------------------------------

struct Plan {
  Geometry g{};
  Descriptors d;
  cublasLtMatmulAlgo_t algo{};
  DeviceBuffer<uint8_t> a_pad, b_pad;  // zero-padded copies of one batch, when M' > M / N' > N
  DeviceBuffer<uint8_t> c_stage;       // N' x M' (column-major) output of one batch, when staged
  std::string description;
};

struct Key {
  Format format;
  int M, N, K;
  Alignments al;
  bool operator<(const Key& o) const {
    return std::make_tuple(format.key(), M, N, K, al.a, al.b, al.c) <
           std::make_tuple(o.format.key(), o.M, o.N, o.K, o.al.a, o.al.b, o.al.c);
  }
};

uint8_t* workspace() {
  static DeviceBuffer<uint8_t> ws(kWorkspaceBytes);  // process-wide, first use only
  return ws.get();
}

std::string geometry_text(const LtProblem& p, const Geometry& g) {
  if (g.m_rows == p.M && g.n_rows == p.N && !g.stage_c) return "as given";
  std::string s;
  if (g.m_rows != p.M) s += "M " + std::to_string(p.M) + " -> " + std::to_string(g.m_rows) + ", ";
  if (g.n_rows != p.N) s += "N " + std::to_string(p.N) + " -> " + std::to_string(g.n_rows) + ", ";
  return s + "C staged";
}

// Builds the plan for p's shape. The first call for a shape allocates and synchronises; later ones
// find it in the cache. Callers hold lt_mutex().
Plan& plan_for(const Format& f, const LtProblem& p) {
  static std::map<Key, std::unique_ptr<Plan>> plans;
  const Alignments given{alignment_of(p.A, operand_bytes(f, p.M, p.K), p.L),
                         alignment_of(p.B, operand_bytes(f, p.N, p.K), p.L),
                         alignment_of(p.C, d_element_bytes(f) * p.M * p.N, p.L)};
  const Key key{f, p.M, p.N, p.K, given};
  if (auto it = plans.find(key); it != plans.end()) return *it->second;

  auto plan = std::make_unique<Plan>();
  std::string refusals;
  bool found = false;
  for (const Geometry& g : candidate_geometries(p.M, p.N)) {
    Descriptors d = make_descriptors(f, g, p.K);
    // The heuristic wants the scale pointers set (it does not read through them).
    set_scale_pointers(d.desc.get(), p.sfa, p.sfb);
    const Alignments al{g.m_rows > p.M ? kMaxAlignment : given.a, g.n_rows > p.N ? kMaxAlignment : given.b,
                        g.stage_c ? kMaxAlignment : given.c};
    cublasLtMatmulHeuristicResult_t result{};
    const cublasStatus_t s = best_algorithm(d, al, &result);
    if (s != CUBLAS_STATUS_SUCCESS) {
      refusals += "\n  " + geometry_text(p, g) + ": " + status_text(s);
      continue;
    }
    plan->g = g;
    plan->d = std::move(d);
    plan->algo = result.algo;
    plan->description = geometry_text(p, g);
    found = true;
    break;
  }
  if (!found)
    throw std::runtime_error("cuBLASLt offers no " + format_text(f) + " GEMM for M=" + std::to_string(p.M) +
                             ", N=" + std::to_string(p.N) + ", K=" + std::to_string(p.K) +
                             " (alignment of A, B, C: " + std::to_string(given.a) + ", " + std::to_string(given.b) +
                             ", " + std::to_string(given.c) + " bytes); tried:" + refusals);

  const Geometry& g = plan->g;
  if (g.m_rows > p.M) plan->a_pad = DeviceBuffer<uint8_t>(size_t(operand_bytes(f, g.m_rows, p.K)));
  if (g.n_rows > p.N) plan->b_pad = DeviceBuffer<uint8_t>(size_t(operand_bytes(f, g.n_rows, p.K)));
  if (g.stage_c) plan->c_stage = DeviceBuffer<uint8_t>(size_t(g.m_rows) * g.n_rows * d_element_bytes(f));
  // Padding rows stay zero for the plan's lifetime: launches copy only the first M (N) rows in.
  // Synchronous, so that a launch on any stream sees the zeros.
  if (plan->a_pad.size()) plan->a_pad.fill_bytes(0);
  if (plan->b_pad.size()) plan->b_pad.fill_bytes(0);
  workspace();
  CUDA_CHECK(cudaDeviceSynchronize());
  return *plans.emplace(key, std::move(plan)).first->second;
}

// Runs p through cuBLASLt; returns the plan's description.
std::string launch(const Format& f, const LtProblem& p, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(lt_mutex());
  Plan& plan = plan_for(f, p);
  const Geometry& g = plan.g;
  const int64_t a_bytes = operand_bytes(f, p.M, p.K), b_bytes = operand_bytes(f, p.N, p.K);
  const int64_t e = d_element_bytes(f);
  const float beta = 0.0f;
  for (int l = 0; l < p.L; ++l) {
    const uint8_t* a = p.A + l * a_bytes;
    const uint8_t* b = p.B + l * b_bytes;
    if (plan.a_pad.size()) {
      CUDA_CHECK(cudaMemcpyAsync(plan.a_pad.get(), a, size_t(a_bytes), cudaMemcpyDeviceToDevice, stream));
      a = plan.a_pad.get();
    }
    if (plan.b_pad.size()) {
      CUDA_CHECK(cudaMemcpyAsync(plan.b_pad.get(), b, size_t(b_bytes), cudaMemcpyDeviceToDevice, stream));
      b = plan.b_pad.get();
    }
    uint8_t* c = static_cast<uint8_t*>(p.C) + int64_t(l) * p.M * p.N * e;
    uint8_t* d = g.stage_c ? plan.c_stage.get() : c;
    set_scale_pointers(plan.d.desc.get(), p.sfa ? p.sfa + l * p.sfa_stride : nullptr,
                       p.sfb ? p.sfb + l * p.sfb_stride : nullptr);
    check(cublasLtMatmul(lt_handle(), plan.d.desc.get(), &p.alpha, b, plan.d.x.get(), a, plan.d.y.get(), &beta, d,
                         plan.d.d.get(), d, plan.d.d.get(), &plan.algo, workspace(), kWorkspaceBytes, stream),
          "cublasLtMatmul");
    if (g.stage_c)  // the top-left M x N of the row-major M' x N' staging buffer
      CUDA_CHECK(cudaMemcpy2DAsync(c, size_t(p.N * e), d, size_t(g.n_rows * e), size_t(p.N * e), size_t(p.M),
                                   cudaMemcpyDeviceToDevice, stream));
  }
  return plan.description;
}

// ---- support ---------------------------------------------------------------------------------------

struct Support {
  bool ok = false;
  std::string why;
};

// Whether cuBLASLt offers each of `formats` on this GPU (an sm_100-class one: the block-scaled FP4 and
// FP8 GEMMs need compute capability 10.x), asked of its heuristic at one shape.
Support probe(const char* what, std::initializer_list<Format> formats) {
  const GpuInfo& gpu = gpu_info();
  if (!gpu.usable)
    return {false,
            std::string("cuBLASLt ") + what + " needs a GPU, and there is none this program can use: " + gpu.why_not};
  if (gpu.cc_major != 10)
    return {false, std::string("cuBLASLt ") + what + " needs compute capability 10.x (B200); this GPU is " +
                       gpu.compute_capability() + " (" + gpu.name + ")"};
  try {
    std::lock_guard<std::mutex> lock(lt_mutex());
    // A shape every kernel family takes, with aligned placeholder scale addresses (the heuristic
    // does not read through them).
    const int n = 256;
    for (const Format& f : formats) {
      const Descriptors d = make_descriptors(f, {n, n, false}, n);
      const uint8_t* placeholder = reinterpret_cast<const uint8_t*>(uintptr_t(1) << 20);
      set_scale_pointers(d.desc.get(), placeholder, placeholder);
      cublasLtMatmulHeuristicResult_t result{};
      const cublasStatus_t s = best_algorithm(d, {kMaxAlignment, kMaxAlignment, kMaxAlignment}, &result);
      if (s != CUBLAS_STATUS_SUCCESS)
        return {false, "cuBLASLt " + std::to_string(cublasLtGetVersion()) + " offers no " + format_text(f) +
                           " GEMM on " + gpu.name + " for " + std::to_string(n) + "^3: " + status_text(s)};
    }
  } catch (const std::exception& e) {
    return {false, std::string("cuBLASLt ") + what + " probe failed: " + e.what()};
  }
  return {true, ""};
}

const Support& nvfp4_support() {
  static const Support s = probe("NVFP4", {kNvfp4Format});
  return s;
}

// E4M3 x E4M3 into both output types of the kind: the formats its benchmarks time.
const Support& mxfp8_support() {
  static const Support s =
      probe("MXFP8", {mxfp8_format(Mxfp8Element::kE4M3, Mxfp8Element::kE4M3, Mxfp8Output::kFp32),
                      mxfp8_format(Mxfp8Element::kE4M3, Mxfp8Element::kE4M3, Mxfp8Output::kBf16)});
  return s;
}

}  // namespace

bool cublaslt_nvfp4_supported(std::string* why) {
  const Support& s = nvfp4_support();
  if (why) *why = s.why;
  return s.ok;
}

void cublaslt_nvfp4(const Nvfp4GemmArgs& a, cudaStream_t stream) {
  validate(a);
  const Support& s = nvfp4_support();
  if (!s.ok) throw std::runtime_error(std::string(kCublasLtNvfp4Name) + " is unavailable: " + s.why);
  const LtProblem p{a.M, a.N, a.K, a.L, a.A, a.B, a.SFA, a.SFB, sf_batch_bytes(a.M, a.K), sf_batch_bytes(a.N, a.K),
                  a.alpha, a.C};
  launch(kNvfp4Format, p, stream);
}

bool cublaslt_mxfp8_supported(std::string* why) {
  const Support& s = mxfp8_support();
  if (why) *why = s.why;
  return s.ok;
}

void cublaslt_mxfp8(const Mxfp8GemmArgs& a, cudaStream_t stream) {
  validate(a);
  const Support& s = mxfp8_support();
  if (!s.ok) throw std::runtime_error(std::string(kCublasLtMxfp8Name) + " is unavailable: " + s.why);
  // The scales of batch l start l * sf_batch_bytes(rows, K, 32) in (mxfp8_gemm.h); no alpha.
  const LtProblem p{a.M, a.N, a.K, a.L, a.A, a.B, a.SFA, a.SFB, sf_batch_bytes(a.M, a.K, kMxSfVector),
                    sf_batch_bytes(a.N, a.K, kMxSfVector), 1.0f, a.C};
  launch(mxfp8_format(a.a_type, a.b_type, a.c_type), p, stream);
}

std::string cublaslt_fp8_selftest(const CublasLtFp8SelftestArgs& a, cudaStream_t stream) {
  const char* api = "cublaslt_fp8_selftest";
  auto reject = [&](const std::string& what) { throw std::invalid_argument(std::string(api) + ": " + what); };
  if (a.M < 1 || a.N < 1 || a.K < 1 || a.L < 1 || a.L > kMaxBatch) reject("M, N, K must be >= 1 and L in [1, 65535]");
  if (a.K % 16 != 0) reject("K must be a multiple of 16 (16-byte rows)");
  if (!a.A || !a.B || !a.C) reject("A, B and C must not be null");
  if (uintptr_t(a.A) % 16 || uintptr_t(a.B) % 16) reject("A and B must be 16-byte aligned");
  if (uintptr_t(a.C) % alignof(__half)) reject("C must be 2-byte aligned");
  if (uintptr_t(a.a_scales) % 16 || uintptr_t(a.b_scales) % 16) reject("the scales must be 16-byte aligned");
  if (!std::isfinite(a.alpha)) reject("alpha must be finite");
  if (!gpu_info().usable) throw std::runtime_error(std::string(api) + ": no usable GPU: " + gpu_info().why_not);
  const LtProblem p{a.M, a.N, a.K, a.L, a.A, a.B, reinterpret_cast<const uint8_t*>(a.a_scales),
                  reinterpret_cast<const uint8_t*>(a.b_scales), int64_t(4 * sizeof(float)), int64_t(4 * sizeof(float)),
                  a.alpha, a.C};
  return launch(kFp8Format, p, stream);
}

}  // namespace gemm
