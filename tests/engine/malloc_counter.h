// Heap-allocation counter for "no allocation after the first call" tests. Eigen allocates through
// std::malloc and operator new goes through malloc too, so counting calls to malloc/calloc/realloc
// between two points counts every heap allocation. glibc only (the __libc_* entry points), and
// not under the address sanitizer, which owns malloc: SALTUS_COUNT_MALLOC is defined when the
// counter is active. The replacement functions are defined here, so include this header from one
// translation unit of a test executable only.
#pragma once

#include <atomic>
#include <cstddef>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#define SALTUS_COUNT_MALLOC 1
namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* ptr, std::size_t size);
void* malloc(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) ++g_allocations;
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) ++g_allocations;
  return __libc_calloc(count, size);
}
void* realloc(void* ptr, std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) ++g_allocations;
  return __libc_realloc(ptr, size);
}
}
// Heap allocations made by fn().
template <class Fn>
long CountAllocations(Fn&& fn) {
  g_allocations = 0;
  g_counting = true;
  fn();
  g_counting = false;
  return g_allocations.load();
}
#endif
