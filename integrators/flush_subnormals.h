// FlushSubnormals: while an object lives, the calling thread's floating-point unit treats
// subnormal operands as zero and flushes subnormal results to zero (x86 SSE: MXCSR bits DAZ and
// FTZ; AArch64: FPCR.FZ); the destructor restores the caller's mode. Elsewhere it does nothing.
//
// Why: an operation with a subnormal operand or result (|x| < 2.2e-308) takes a microcode assist
// costing ~100 cycles on current x86 cores instead of ~4. Such values arise in smooth dynamics
// without any error: in the N-link chain hanging from a fixed joint, the disturbance from the top
// reaches link k after time t with an amplitude ~ (c t)^(2k) / (2k)!, so the off-axis quaternion
// components of the deep links pass through 1e-308 … 1e-324 and every product with them (G, the
// Delassus matrix W = G M⁻¹ Gᵀ, ω × Iω) is subnormal. Values that small are 1e-292 below the
// round-off of the unit quaternion they belong to; replacing them by 0 changes no digit a
// tolerance can see. Integrator::Step runs each step under this guard.
#pragma once

#if defined(__SSE2__) || defined(_M_X64)
#include <xmmintrin.h>
#endif

namespace saltus::integrators {

class FlushSubnormals {
 public:
  FlushSubnormals() {
#if defined(__SSE2__) || defined(_M_X64)
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | kFtz | kDaz);
#elif defined(__aarch64__)
    asm volatile("mrs %0, fpcr" : "=r"(saved_));
    const unsigned long long mode = saved_ | kFz;
    asm volatile("msr fpcr, %0" : : "r"(mode));
#endif
  }
  ~FlushSubnormals() {
#if defined(__SSE2__) || defined(_M_X64)
    _mm_setcsr(saved_);
#elif defined(__aarch64__)
    asm volatile("msr fpcr, %0" : : "r"(saved_));
#endif
  }
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
#if defined(__SSE2__) || defined(_M_X64)
  static constexpr unsigned kFtz = 1u << 15;  // MXCSR flush-to-zero
  static constexpr unsigned kDaz = 1u << 6;   // MXCSR denormals-are-zero
  unsigned saved_ = 0;
#elif defined(__aarch64__)
  static constexpr unsigned long long kFz = 1ull << 24;  // FPCR flush-to-zero
  unsigned long long saved_ = 0;
#endif
};

}  // namespace saltus::integrators
