// The instruction descriptors of kind::mxf8f6f4 and kind::f16 (common/tcgen05_desc_kinds.h) against
// worked values derived from the PTX ISA 9.1 tables (9.7.16.4.2, Tables 42 and 43), every field
// decoded back from its own bits, the validity rules of each kind with their messages, and the
// decoders of the operand formats these kinds read (E5M2, UE8M0, FP16, BF16), each against an
// independent definition.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "common/formats.h"
#include "common/tcgen05_desc.h"
#include "common/tcgen05_desc_kinds.h"

namespace gemm::tcgen05 {
namespace {

// ---- Worked values --------------------------------------------------------------------------------

TEST(Tcgen05KindDescriptors, WorkedValues) {
  // FACTS section 2.4: E4M3 x E4M3, UE8M0, M = 128, N = 256: bit 23 (UE8M0) | 32 << 17 | 1 << 27.
  EXPECT_EQ(mxf8f6f4_instr_descriptor(kMxTypeE4M3, kMxTypeE4M3, 128, 256, 0, 0), 0x08C00000u);
  // E5M2 A (1 << 7), E4M3 B, M = 256 (2 << 27), N = 128, SFA id 3 (3 << 29), SFB id 2 (2 << 4).
  EXPECT_EQ(mxf8f6f4_instr_descriptor(kMxTypeE5M2, kMxTypeE4M3, 256, 128, 3, 2), 0x70A000A0u);
  // BF16 x BF16 -> F32: D type 1 << 4, A 1 << 7, B 1 << 10, N = 256 (32 << 17), M = 128 (8 << 24).
  EXPECT_EQ(f16_instr_descriptor(kF16TypeBF16, kF16TypeBF16, 128, 256), 0x08400490u);
  EXPECT_EQ(f16_instr_descriptor(kF16TypeF16, kF16TypeF16, 128, 64), 0x08100010u);
  EXPECT_EQ(f16_instr_descriptor(kF16TypeBF16, kF16TypeBF16, 256, 256), 0x10400490u);
  // For M = 128 and 256, the block-scaled M (bits 27-28, M >> 7) has the same bits as M >> 4 in
  // 24-28, the kind::f16 position (and CUTLASS's for both).
  EXPECT_EQ(mxf8f6f4_instr_descriptor(0, 0, 128, 8, 0, 0) & 0x1F000000u, (128u >> 4) << 24);
  EXPECT_EQ(mxf8f6f4_instr_descriptor(0, 0, 256, 8, 0, 0) & 0x1F000000u, (256u >> 4) << 24);
}

// Each field, set alone to a value with all its bits, lands on exactly the table's bits.
TEST(Tcgen05KindDescriptors, EachFieldOwnsExactlyItsBits) {
  struct Case {
    const char* name;
    uint32_t word, bits;
  };
  auto f16 = [](auto set) {
    F16InstrDescriptor d;
    d.d_type = 0;
    d.a_type = d.b_type = 0;
    set(d);
    return encode(d);
  };
  auto mx = [](auto set) {
    Mxf8f6f4InstrDescriptor d;
    d.scale_type = 0;
    set(d);
    return encode(d);
  };
  const Case cases[] = {
      {"f16 sparsity selector", f16([](auto& d) { d.sparse_selector = 3; }), 0x3u},
      {"f16 sparsity", f16([](auto& d) { d.sparse = 1; }), 1u << 2},
      {"f16 saturate", f16([](auto& d) { d.saturate = 1; }), 1u << 3},
      {"f16 D type", f16([](auto& d) { d.d_type = 3; }), 0x3u << 4},
      {"f16 A type", f16([](auto& d) { d.a_type = 7; }), 0x7u << 7},
      {"f16 B type", f16([](auto& d) { d.b_type = 7; }), 0x7u << 10},
      {"f16 negate A", f16([](auto& d) { d.negate_a = 1; }), 1u << 13},
      {"f16 negate B", f16([](auto& d) { d.negate_b = 1; }), 1u << 14},
      {"f16 transpose A", f16([](auto& d) { d.transpose_a = 1; }), 1u << 15},
      {"f16 transpose B", f16([](auto& d) { d.transpose_b = 1; }), 1u << 16},
      {"f16 N", f16([](auto& d) { d.n = 63 << 3; }), 0x3Fu << 17},
      {"f16 M", f16([](auto& d) { d.m = 31 << 4; }), 0x1Fu << 24},
      {"f16 max shift", f16([](auto& d) { d.max_shift = 3; }), 0x3u << 30},
      {"mxf8f6f4 sparsity", mx([](auto& d) { d.sparse = 1; }), 1u << 2},
      {"mxf8f6f4 SFB id", mx([](auto& d) { d.sfb_id = 3; }), 0x3u << 4},
      {"mxf8f6f4 A type", mx([](auto& d) { d.a_type = 7; }), 0x7u << 7},
      {"mxf8f6f4 B type", mx([](auto& d) { d.b_type = 7; }), 0x7u << 10},
      {"mxf8f6f4 negate A", mx([](auto& d) { d.negate_a = 1; }), 1u << 13},
      {"mxf8f6f4 negate B", mx([](auto& d) { d.negate_b = 1; }), 1u << 14},
      {"mxf8f6f4 transpose A", mx([](auto& d) { d.transpose_a = 1; }), 1u << 15},
      {"mxf8f6f4 transpose B", mx([](auto& d) { d.transpose_b = 1; }), 1u << 16},
      {"mxf8f6f4 N", mx([](auto& d) { d.n = 63 << 3; }), 0x3Fu << 17},
      {"mxf8f6f4 scale type", mx([](auto& d) { d.scale_type = 1; }), 1u << 23},
      {"mxf8f6f4 M", mx([](auto& d) { d.m = 3 << 7; }), 0x3u << 27},
      {"mxf8f6f4 SFA id", mx([](auto& d) { d.sfa_id = 3; }), 0x3u << 29},
  };
  for (const Case& c : cases) EXPECT_EQ(c.word, c.bits) << c.name;
  // What is left over in each table is reserved, and decodes as such.
  EXPECT_EQ(f16_field::kReservedMask, (1u << 6) | (1u << 23) | (1u << 29));
  EXPECT_EQ(mxf8f6f4_field::kReservedMask, 0x3u | (1u << 3) | (1u << 6) | (0x7u << 24) | (1u << 31));
  EXPECT_EQ(decode_f16_instr_descriptor(1u << 29).reserved, 1u << 29);
  EXPECT_EQ(decode_mxf8f6f4_instr_descriptor(1u << 31).reserved, 1u << 31);
}

TEST(Tcgen05KindDescriptors, FieldsRoundTrip) {
  F16InstrDescriptor f;
  f.sparse = 1;
  f.sparse_selector = 2;
  f.a_type = kF16TypeBF16;
  f.b_type = kF16TypeF16;
  f.negate_a = 1;
  f.transpose_b = 1;
  f.n = 248;
  f.m = 64;
  f.max_shift = 2;
  const F16InstrDescriptor g = decode_f16_instr_descriptor(encode(f));
  EXPECT_EQ(g.sparse, 1u);
  EXPECT_EQ(g.sparse_selector, 2u);
  EXPECT_EQ(g.d_type, kDTypeF32);
  EXPECT_EQ(g.a_type, kF16TypeBF16);
  EXPECT_EQ(g.b_type, kF16TypeF16);
  EXPECT_EQ(g.negate_a, 1u);
  EXPECT_EQ(g.negate_b, 0u);
  EXPECT_EQ(g.transpose_a, 0u);
  EXPECT_EQ(g.transpose_b, 1u);
  EXPECT_EQ(g.n, 248u);
  EXPECT_EQ(g.m, 64u);
  EXPECT_EQ(g.max_shift, 2u);
  EXPECT_EQ(g.reserved, 0u);

  Mxf8f6f4InstrDescriptor x;
  x.a_type = kMxTypeE5M2;
  x.b_type = kMxTypeE2M1;
  x.negate_b = 1;
  x.transpose_a = 1;
  x.n = 16;
  x.m = 256;
  x.sfa_id = 1;
  x.sfb_id = 3;
  const Mxf8f6f4InstrDescriptor y = decode_mxf8f6f4_instr_descriptor(encode(x));
  EXPECT_EQ(y.a_type, kMxTypeE5M2);
  EXPECT_EQ(y.b_type, kMxTypeE2M1);
  EXPECT_EQ(y.negate_a, 0u);
  EXPECT_EQ(y.negate_b, 1u);
  EXPECT_EQ(y.transpose_a, 1u);
  EXPECT_EQ(y.n, 16u);
  EXPECT_EQ(y.m, 256u);
  EXPECT_EQ(y.sfa_id, 1u);
  EXPECT_EQ(y.sfb_id, 3u);
  EXPECT_EQ(y.scale_type, kScaleUE8M0);
  EXPECT_EQ(y.reserved, 0u);
}

TEST(Tcgen05KindDescriptors, ShapeIsDecodedAsTheKindLaysItOut) {
  // The same word names different M under different kinds: f16's M >> 4 starts at bit 24.
  const uint32_t f16 = f16_instr_descriptor(kF16TypeBF16, kF16TypeBF16, 128, 96);
  EXPECT_EQ(mma_shape(MmaKind::kF16, f16).m, 128u);
  EXPECT_EQ(mma_shape(MmaKind::kF16, f16).n, 96u);
  EXPECT_FALSE(mma_shape(MmaKind::kF16, f16).scaled);
  const uint32_t mx = mxf8f6f4_instr_descriptor(kMxTypeE4M3, kMxTypeE4M3, 256, 256, 1, 2);
  EXPECT_EQ(mma_shape(MmaKind::kMxf8f6f4, mx).m, 256u);
  EXPECT_EQ(mma_shape(MmaKind::kMxf8f6f4, mx).n, 256u);
  EXPECT_TRUE(mma_shape(MmaKind::kMxf8f6f4, mx).scaled);
  // The NVFP4 descriptor decodes as before.
  EXPECT_EQ(mma_shape(MmaKind::kMxf4Nvf4, nvfp4_instr_descriptor(128, 256)).m, 128u);
  EXPECT_EQ(mma_shape(MmaKind::kMxf4Nvf4, nvfp4_instr_descriptor(128, 256)).n, 256u);
  EXPECT_EQ(mma_k(MmaKind::kMxf4Nvf4), 64u);
  EXPECT_EQ(mma_k(MmaKind::kMxf8f6f4), 32u);
  EXPECT_EQ(mma_k(MmaKind::kF16), 16u);
}

// ---- Validity ---------------------------------------------------------------------------------------

// The rejection message, or "" for a valid descriptor.
std::string why(Rejection r) { return r.what ? r.what : ""; }

TEST(Tcgen05KindDescriptors, ValidDescriptorsPass) {
  for (uint32_t n = 8; n <= 256; n += 8) {
    EXPECT_EQ(why(check_f16(f16_instr_descriptor(kF16TypeBF16, kF16TypeBF16, 128, n), 1)), "") << n;
    EXPECT_EQ(why(check_f16(f16_instr_descriptor(kF16TypeF16, kF16TypeF16, 64, n), 1)), "") << n;
    EXPECT_EQ(why(check_mxf8f6f4(mxf8f6f4_instr_descriptor(0, 1, 128, n, 3, 1), 1, ScaleVec::kBlock32)), "") << n;
  }
  for (uint32_t n = 16; n <= 256; n += 16) {
    EXPECT_EQ(why(check_f16(f16_instr_descriptor(kF16TypeBF16, kF16TypeBF16, 256, n), 2)), "") << n;
    EXPECT_EQ(why(check_mxf8f6f4(mxf8f6f4_instr_descriptor(1, 1, 256, n, 0, 0), 2, ScaleVec::kBlock32)), "") << n;
  }
  for (uint32_t id = 0; id < 4; ++id)  // every byte of the scale word is a valid id with .block32
    EXPECT_EQ(why(check_mxf8f6f4(mxf8f6f4_instr_descriptor(0, 0, 128, 128, id, 3 - id), 1, ScaleVec::kBlock32)), "");
  F16InstrDescriptor f16d;  // an F16 D with F16 operands is valid PTX (the emulator refuses it)
  f16d.d_type = kDTypeF16;
  f16d.m = 128;
  f16d.n = 64;
  EXPECT_EQ(why(check_f16(encode(f16d), 1)), "");
  EXPECT_EQ(why(check_mxf4nvf4(nvfp4_instr_descriptor(128, 256), 1, ScaleVec::kBlock16)), "");
}

// Invalid descriptors of each kind, each refused with the rule it breaks.
TEST(Tcgen05KindDescriptors, InvalidDescriptorsAreRejectedWithTheirRule) {
  const uint32_t f16_ok = f16_instr_descriptor(kF16TypeBF16, kF16TypeBF16, 128, 128);
  const uint32_t mx_ok = mxf8f6f4_instr_descriptor(kMxTypeE4M3, kMxTypeE4M3, 128, 128, 0, 0);
  struct Case {
    const char* name;
    Rejection r;
    const char* message;  // a part of the expected message
  };
  auto with = [](uint32_t w, BitField f, uint32_t v) { return (w & ~field_mask(f)) | field_put(f, v); };
  using namespace std::string_literals;
  const Case cases[] = {
      // kind::f16
      {"f16 reserved bit 23", check_f16(f16_ok | 1u << 23, 1), "reserved"},
      {"f16 saturate", check_f16(f16_ok | 1u << 3, 1), "saturate"},
      {"f16 selector without sparsity", check_f16(f16_ok | 1u, 1), "sparsity selector"},
      {"f16 D type S32", check_f16(with(f16_ok, f16_field::kDType, 2), 1), "D type"},
      {"f16 A type TF32", check_f16(with(f16_ok, f16_field::kAType, 2), 1), "F16 (0) or BF16 (1)"},
      {"f16 B type 7", check_f16(with(f16_ok, f16_field::kBType, 7), 1), "F16 (0) or BF16 (1)"},
      {"f16 F16 D with BF16", check_f16(with(f16_ok, f16_field::kDType, kDTypeF16), 1), "F16 D"},
      {"f16 M = 256 with cta_group::1", check_f16(f16_instr_descriptor(1, 1, 256, 128), 1), "M must be"},
      {"f16 M = 64 with cta_group::2", check_f16(f16_instr_descriptor(1, 1, 64, 128), 2), "M must be"},
      {"f16 M = 192", check_f16(f16_instr_descriptor(1, 1, 192, 128), 1), "M must be"},
      {"f16 N = 0", check_f16(f16_instr_descriptor(1, 1, 128, 0), 1), "N must be"},
      {"f16 N = 264", check_f16(with(f16_ok, f16_field::kN, 33), 1), "N must be"},
      {"f16 N = 24 with cta_group::2", check_f16(f16_instr_descriptor(1, 1, 256, 24), 2), "N must be"},
      {"f16 maximum shift", check_f16(with(f16_ok, f16_field::kMaxShift, 1), 1), ".ws"},
      // kind::mxf8f6f4
      {"mxf8f6f4 with .block16", check_mxf8f6f4(mx_ok, 1, ScaleVec::kBlock16), ".block32"},
      {"mxf8f6f4 without a scale vector", check_mxf8f6f4(mx_ok, 1, ScaleVec::kNone), ".block32"},
      {"mxf8f6f4 UE4M3 scales", check_mxf8f6f4(mx_ok & ~(1u << 23), 1, ScaleVec::kBlock32), "UE8M0"},
      {"mxf8f6f4 reserved bit 31", check_mxf8f6f4(mx_ok | 1u << 31, 1, ScaleVec::kBlock32), "reserved"},
      {"mxf8f6f4 reserved bits 24-26", check_mxf8f6f4(mx_ok | 1u << 24, 1, ScaleVec::kBlock32), "reserved"},
      {"mxf8f6f4 A type 2", check_mxf8f6f4(with(mx_ok, mxf8f6f4_field::kAType, 2), 1, ScaleVec::kBlock32), "type codes"},
      {"mxf8f6f4 B type 6", check_mxf8f6f4(with(mx_ok, mxf8f6f4_field::kBType, 6), 1, ScaleVec::kBlock32), "type codes"},
      {"mxf8f6f4 M = 256 with cta_group::1", check_mxf8f6f4(mxf8f6f4_instr_descriptor(0, 0, 256, 128, 0, 0), 1, ScaleVec::kBlock32), "M must be"},
      {"mxf8f6f4 M field 0", check_mxf8f6f4(with(mx_ok, mxf8f6f4_field::kM, 0), 1, ScaleVec::kBlock32), "M must be"},
      {"mxf8f6f4 M field 3", check_mxf8f6f4(with(mx_ok, mxf8f6f4_field::kM, 3), 2, ScaleVec::kBlock32), "M must be"},
      {"mxf8f6f4 sparse M = 128 pair", check_mxf8f6f4(mx_ok | 1u << 2, 2, ScaleVec::kBlock32), "M must be"},
      {"mxf8f6f4 N = 8 with cta_group::2", check_mxf8f6f4(mxf8f6f4_instr_descriptor(0, 0, 256, 8, 0, 0), 2, ScaleVec::kBlock32), "N must be"},
      {"mxf8f6f4 transposed E2M1", check_mxf8f6f4(with(mx_ok, mxf8f6f4_field::kAType, kMxTypeE2M1) | 1u << 15, 1, ScaleVec::kBlock32), "8-bit"},
      {"mxf8f6f4 transposed B, N = 8", check_mxf8f6f4(mxf8f6f4_instr_descriptor(0, 0, 128, 8, 0, 0) | 1u << 16, 1, ScaleVec::kBlock32), "Table 52"},
      // kind::mxf4nvf4, where the ISA forbids nonzero scale ids
      {"mxf4nvf4 .block16 with SFA id 2", check_mxf4nvf4(nvfp4_instr_descriptor(128, 128) | 2u << 29, 1, ScaleVec::kBlock16), "ids must be 0"},
      {"mxf4nvf4 .block16 with SFB id 1", check_mxf4nvf4(nvfp4_instr_descriptor(128, 128) | 1u << 4, 1, ScaleVec::kBlock16), "ids must be 0"},
      {"mxf4nvf4 .block32 with SFA id 1", check_mxf4nvf4(nvfp4_instr_descriptor(128, 128) | 1u << 23 | 1u << 29, 1, ScaleVec::kBlock32), "0 or 2"},
      {"mxf4nvf4 UE4M3 with .block32", check_mxf4nvf4(nvfp4_instr_descriptor(128, 128), 1, ScaleVec::kBlock32), "UE4M3"},
      {"mxf4nvf4 E4M3 code", check_mxf4nvf4(nvfp4_instr_descriptor(128, 128) & ~(7u << 7), 1, ScaleVec::kBlock16), "E2M1"},
      {"mxf4nvf4 transpose", check_mxf4nvf4(nvfp4_instr_descriptor(128, 128) | 1u << 15, 1, ScaleVec::kBlock16), "transposed"},
      {"mxf4nvf4 K = 96", check_mxf4nvf4(nvfp4_instr_descriptor(256, 128) | 1u << 31, 2, ScaleVec::kBlock16), "sm_103a"},
      {"mxf4nvf4 M = 256 with cta_group::1", check_mxf4nvf4(nvfp4_instr_descriptor(256, 128), 1, ScaleVec::kBlock16), "M must be"},
  };
  for (const Case& c : cases) {
    ASSERT_NE(c.r.what, nullptr) << c.name << " was accepted";
    EXPECT_NE(std::string(c.r.what).find(c.message), std::string::npos) << c.name << ": " << c.r.what;
    const std::string kind = std::string(c.name).substr(0, std::string(c.name).find(' '));
    EXPECT_EQ(std::string(c.r.what).rfind("kind::" + kind + ":", 0), 0u) << "names its kind: " << c.r.what;
  }
  // The offending values come with the message.
  const Rejection n = check_f16(with(f16_ok, f16_field::kN, 33), 1);
  EXPECT_EQ(n.a, 264u);
  EXPECT_EQ(n.b, 1u);
}

// ---- The formats these kinds read -------------------------------------------------------------------

TEST(MxFormats, E5M2IsTheUpperByteOfAnFp16) {
  // E5M2 has FP16's sign, exponent width and bias: code c is the FP16 with bits c << 8, decoded here
  // by the independent double-based FP16 decoder. Every code: zeros, subnormals, Inf, NaN.
  for (int c = 0; c < 256; ++c) {
    const double want = half_bits_to_double(uint16_t(c << 8));
    const float got = e5m2_to_float(uint8_t(c));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << c;
    } else {
      EXPECT_EQ(double(got), want) << c;
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << c;
    }
  }
  EXPECT_EQ(e5m2_to_float(0x7B), 57344.0f);            // largest finite
  EXPECT_EQ(e5m2_to_float(0x01), std::ldexp(1.0f, -16));  // smallest subnormal
  EXPECT_EQ(e5m2_to_float(0x04), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_TRUE(std::isinf(e5m2_to_float(0x7C)) && e5m2_to_float(0xFC) < 0);
  for (uint8_t nan : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}) EXPECT_TRUE(std::isnan(e5m2_to_float(nan))) << int(nan);
}

TEST(MxFormats, E4M3SpecialCodesAsTheMmaReadsThem) {
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3_to_float(0x08), std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7F)));
  EXPECT_TRUE(std::isnan(e4m3_to_float(0xFF)));
  EXPECT_EQ(e4m3_to_float(0x78), 256.0f);  // no Inf: exponent all ones is still a number
  EXPECT_TRUE(std::signbit(e4m3_to_float(0x80)));
}

TEST(MxFormats, Ue8m0IsAPowerOfTwoWithBias127) {
  for (int c = 0; c < 255; ++c) EXPECT_EQ(double(ue8m0_to_float(uint8_t(c))), std::ldexp(1.0, c - 127)) << c;
  EXPECT_TRUE(std::isnan(ue8m0_to_float(0xFF)));
  EXPECT_EQ(ue8m0_to_float(127), 1.0f);
}

TEST(MxFormats, Fp16AndBf16DecodeEveryCode) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const double want = half_bits_to_double(uint16_t(h));
    const float got = fp16_bits_to_float(uint16_t(h));
    if (std::isnan(want))
      ASSERT_TRUE(std::isnan(got)) << h;
    else
      ASSERT_EQ(double(got), want) << h;
    // BF16: the upper half of an FP32.
    const uint32_t bits = h << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    const float b = bf16_bits_to_float(uint16_t(h));
    if (std::isnan(f))
      ASSERT_TRUE(std::isnan(b)) << h;
    else
      ASSERT_EQ(b, f) << h;
  }
  EXPECT_EQ(bf16_bits_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_bits_to_float(0xC040), -3.0f);
  EXPECT_EQ(fp16_bits_to_float(0x3C00), 1.0f);
  EXPECT_EQ(fp16_bits_to_float(0x7BFF), 65504.0f);
}

}  // namespace
}  // namespace gemm::tcgen05
