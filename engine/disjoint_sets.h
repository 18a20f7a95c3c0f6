// Disjoint sets of the integers 0 … n − 1: union–find with path halving (Tarjan & van Leeuwen,
// J. ACM 31, 1984), the connected components of a graph from its edges in near-linear time.
// Unite makes the smaller root the root of the union, so every component's root is its smallest
// member and the roots do not depend on the order of the edges.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace saltus::engine {

class DisjointSets {
 public:
  explicit DisjointSets(int n) : parent_(static_cast<std::size_t>(n)) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  // Back to n singletons, keeping the storage (no allocation when n does not grow).
  void Reset(int n) {
    parent_.resize(static_cast<std::size_t>(n));
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  // The root of i's set.
  int Find(int i) {
    while (parent_[static_cast<std::size_t>(i)] != i) {
      int& p = parent_[static_cast<std::size_t>(i)];
      p = parent_[static_cast<std::size_t>(p)];
      i = p;
    }
    return i;
  }
  void Unite(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
  }

 private:
  std::vector<int> parent_;
};

}  // namespace saltus::engine
