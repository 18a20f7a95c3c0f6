// Provenance of results (tools/metadata.h): SHA-256 against the FIPS 180-2 example digests and
// NIST's one-million-'a' vector, shell quoting of command lines.
#include "tools/metadata.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace saltus::tools {
namespace {

// FIPS 180-2, Appendix B.1-B.3 (one block, two blocks, 10^6 'a'), and the empty message.
TEST(Sha256Test, MatchesThePublishedDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Messages of 55, 56, 63 and 64 bytes put the length field in the first or a second padding
// block; a different byte anywhere changes the digest.
TEST(Sha256Test, PaddingBoundariesGiveDistinctDigests) {
  std::vector<std::string> digests;
  for (const std::size_t n : {55, 56, 63, 64, 65}) {
    digests.push_back(Sha256Hex(std::string(n, 'x')));
    EXPECT_EQ(digests.back().size(), 64u);
  }
  for (std::size_t i = 0; i < digests.size(); ++i) {
    for (std::size_t j = i + 1; j < digests.size(); ++j) EXPECT_NE(digests[i], digests[j]);
  }
  EXPECT_THROW(FileSha256("/nonexistent/scene.yaml"), std::runtime_error);
}

TEST(CommandLineTest, QuotesWhatTheShellWouldSplit) {
  const std::vector<std::string> args = {"run", "my scene.yaml", "--rtol=1e-6", "it's", ""};
  EXPECT_EQ(CommandLine(args), "saltus run 'my scene.yaml' --rtol=1e-6 'it'\\''s' ''");
}

}  // namespace
}  // namespace saltus::tools
