// A small XML reader: the document as a tree of elements with their attributes and the line of
// each start tag, for the URDF robot descriptions (tools/urdf.h), which use elements and
// attributes only.
//
// What it reads (XML 1.0, W3C Recommendation, 5th edition):
//   - an optional UTF-8 byte-order mark, the XML declaration, processing instructions, comments
//     and a document type declaration (skipped, with its internal subset) before the root
//     element; comments and processing instructions after it;
//   - elements <name a="v" b='w'>…</name> and <name/>, names of letters, digits, '_', ':', '-',
//     '.' and any non-ASCII byte (not starting with a digit, '-' or '.');
//   - attribute values with the five predefined entities (&lt; &gt; &amp; &quot; &apos;) and
//     character references (&#N; &#xH;, written as UTF-8), tab, newline and carriage return
//     normalized to spaces (§3.3.3);
//   - character data and CDATA sections between elements (skipped: URDF carries none).
// It rejects what is not well-formed in these terms: an unclosed or mismatched tag, a repeated
// attribute, '<' in an attribute value, an unknown entity, a second root element, text outside
// the root, elements nested deeper than kMaxXmlDepth. Entities declared in a document type are
// not expanded (an error where used). Every error is an XmlError with the 1-based line where the
// reader stopped.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace saltus::tools {

inline constexpr int kMaxXmlDepth = 256;

struct XmlElement {
  std::string name;
  int line = 0;  // 1-based line of the start tag's '<'
  std::vector<std::pair<std::string, std::string>> attributes;  // in document order
  std::vector<XmlElement> children;                             // elements only, in order

  // The value of attribute `key`, or nullptr.
  const std::string* Attribute(std::string_view key) const;
  // The first child element named `child_name`, or nullptr.
  const XmlElement* Child(std::string_view child_name) const;
};

class XmlError : public std::runtime_error {
 public:
  XmlError(int line, const std::string& what) : std::runtime_error(what), line_(line) {}
  int line() const { return line_; }

 private:
  int line_;
};

// The root element of `text`. Throws XmlError.
XmlElement ReadXml(std::string_view text);

}  // namespace saltus::tools
