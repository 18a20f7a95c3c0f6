#include "tools/metadata.h"

#include <unistd.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "tools/build_info.h"
#include "tools/json_writer.h"

namespace saltus::tools {

namespace {

// FIPS 180-4, section 4.2.2: the first 32 bits of the fractional parts of the cube roots of the
// first 64 primes.
constexpr std::array<std::uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t Rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// One 64-byte block into the hash value H (section 6.2.2).
void Compress(const unsigned char* block, std::array<std::uint32_t, 8>* hash) {
  std::array<std::uint32_t, 64> w{};
  for (int t = 0; t < 16; ++t) {
    w[t] = static_cast<std::uint32_t>(block[4 * t]) << 24 |
           static_cast<std::uint32_t>(block[4 * t + 1]) << 16 |
           static_cast<std::uint32_t>(block[4 * t + 2]) << 8 | block[4 * t + 3];
  }
  for (int t = 16; t < 64; ++t) {
    const std::uint32_t s0 = Rotr(w[t - 15], 7) ^ Rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const std::uint32_t s1 = Rotr(w[t - 2], 17) ^ Rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  std::array<std::uint32_t, 8> r = *hash;  // a, b, c, d, e, f, g, h
  for (int t = 0; t < 64; ++t) {
    const std::uint32_t sigma1 = Rotr(r[4], 6) ^ Rotr(r[4], 11) ^ Rotr(r[4], 25);
    const std::uint32_t ch = (r[4] & r[5]) ^ (~r[4] & r[6]);
    const std::uint32_t t1 = r[7] + sigma1 + ch + kRoundConstants[t] + w[t];
    const std::uint32_t sigma0 = Rotr(r[0], 2) ^ Rotr(r[0], 13) ^ Rotr(r[0], 22);
    const std::uint32_t maj = (r[0] & r[1]) ^ (r[0] & r[2]) ^ (r[1] & r[2]);
    for (int k = 7; k > 0; --k) r[k] = r[k - 1];
    r[4] += t1;
    r[0] = t1 + sigma0 + maj;
  }
  for (int k = 0; k < 8; ++k) (*hash)[k] += r[k];
}

bool PlainShellWord(const std::string& arg) {
  if (arg.empty()) return false;
  for (const char c : arg) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       std::string_view("-_./=,:+@%").find(c) != std::string_view::npos;
    if (!plain) return false;
  }
  return true;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  // Initial hash value, section 5.3.3.
  std::array<std::uint32_t, 8> hash = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::size_t i = 0;
  for (; i + 64 <= data.size(); i += 64) {
    Compress(reinterpret_cast<const unsigned char*>(data.data() + i), &hash);
  }
  // Padding (section 5.1.1): 0x80, zeros, then the length in bits as a big-endian 64-bit word.
  std::array<unsigned char, 128> tail{};
  const std::size_t rest = (data.size() - i) & 63;  // < 64: the loop took the full blocks
  for (std::size_t k = 0; k < rest; ++k) tail[k] = static_cast<unsigned char>(data[i + k]);
  tail[rest] = 0x80;
  const std::size_t tail_size = rest + 9 <= 64 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int k = 0; k < 8; ++k) {
    tail[tail_size - 1 - k] = static_cast<unsigned char>(bits >> (8 * k));
  }
  for (std::size_t k = 0; k < tail_size; k += 64) Compress(tail.data() + k, &hash);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (const std::uint32_t word : hash) {
    for (int shift = 28; shift >= 0; shift -= 4) hex += kHex[(word >> shift) & 0xf];
  }
  return hex;
}

std::string FileSha256(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read " + path);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) throw std::runtime_error("cannot read " + path);
  return Sha256Hex(bytes);
}

std::string CommandLine(std::span<const std::string> args) {
  std::string line = "saltus";
  for (const std::string& arg : args) {
    line += ' ';
    if (PlainShellWord(arg)) {
      line += arg;
      continue;
    }
    line += '\'';
    for (const char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

Provenance CollectProvenance(std::span<const std::string> args, const std::string& scene_file) {
  Provenance p;
  p.version = std::string(Version());
  p.commit = std::string(Commit());
  if (!scene_file.empty()) p.scene_sha256 = FileSha256(scene_file);
  p.command_line = CommandLine(args);
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) p.host = host;
  return p;
}

void WriteProvenanceJson(const Provenance& p, JsonWriter* w) {
  w->BeginObject();
  w->Key("saltus_version").String(p.version);
  w->Key("saltus_commit").String(p.commit);
  w->Key("scene_sha256").String(p.scene_sha256);
  w->Key("command_line").String(p.command_line);
  w->Key("host").String(p.host);
  if (!p.collect_command_line.empty()) {
    w->Key("collect_command_line").String(p.collect_command_line);
  }
  if (!p.scenes.empty()) {
    w->Key("scenes").BeginArray();
    for (const SceneDigest& s : p.scenes) {
      w->BeginObject().Key("name").String(s.name).Key("file").String(s.file);
      w->Key("sha256").String(s.sha256).EndObject();
    }
    w->EndArray();
  }
  w->EndObject();
}

}  // namespace saltus::tools
