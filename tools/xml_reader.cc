#include "tools/xml_reader.h"

#include <algorithm>
#include <cstdint>

namespace saltus::tools {

const std::string* XmlElement::Attribute(std::string_view key) const {
  for (const auto& [k, v] : attributes)
    if (k == key) return &v;
  return nullptr;
}

const XmlElement* XmlElement::Child(std::string_view child_name) const {
  for (const XmlElement& c : children)
    if (c.name == child_name) return &c;
  return nullptr;
}

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool IsNameStart(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u == ':' || u >= 0x80;
}

bool IsNameChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return IsNameStart(c) || (u >= '0' && u <= '9') || u == '-' || u == '.';
}

// Appends code point `cp` as UTF-8.
void AppendUtf8(std::uint32_t cp, std::string* out) {
  const auto byte = [](std::uint32_t b) {
    return static_cast<char>(static_cast<unsigned char>(b));
  };
  if (cp < 0x80) {
    out->push_back(byte(cp));
  } else if (cp < 0x800) {
    out->push_back(byte(0xC0 | (cp >> 6)));
    out->push_back(byte(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(byte(0xE0 | (cp >> 12)));
    out->push_back(byte(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(byte(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(byte(0xF0 | (cp >> 18)));
    out->push_back(byte(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(byte(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(byte(0x80 | (cp & 0x3F)));
  }
}

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  XmlElement Read() {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
    SkipMisc(/*prolog=*/true);
    if (AtEnd()) Fail("no root element");
    if (text_[pos_] != '<') Fail("text before the root element");
    XmlElement root;
    ReadElement(&root);
    SkipMisc(/*prolog=*/false);
    if (!AtEnd()) {
      Fail(text_[pos_] == '<' ? "a second element after the root element <" + root.name + ">"
                              : "text after the root element <" + root.name + ">");
    }
    return root;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const { throw XmlError(line_, what); }

  bool AtEnd() const { return pos_ >= text_.size(); }
  bool LookingAt(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }

  // Moves n bytes on, counting the newlines passed.
  void Advance(std::size_t n) {
    const std::size_t end = std::min(text_.size(), pos_ + n);
    line_ += static_cast<int>(std::count(text_.begin() + static_cast<std::ptrdiff_t>(pos_),
                                         text_.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
    pos_ = end;
  }

  void SkipSpace() {
    std::size_t n = 0;
    while (pos_ + n < text_.size() && IsSpace(text_[pos_ + n])) ++n;
    Advance(n);
  }

  // Moves past the next `terminator`, or fails naming `what` if there is none.
  void SkipPast(std::string_view terminator, const std::string& what) {
    const std::size_t at = text_.find(terminator, pos_);
    if (at == std::string_view::npos) Fail(what + " is not closed");
    Advance(at + terminator.size() - pos_);
  }

  // Whitespace, comments and processing instructions; in the prolog also one document type
  // declaration (its internal subset in brackets skipped whole).
  void SkipMisc(bool prolog) {
    for (;;) {
      SkipSpace();
      if (LookingAt("<!--")) {
        SkipPast("-->", "a comment");
      } else if (LookingAt("<?")) {
        SkipPast("?>", "a processing instruction");
      } else if (prolog && LookingAt("<!DOCTYPE")) {
        int brackets = 0;
        for (;;) {
          if (AtEnd()) Fail("the document type declaration is not closed");
          const char c = text_[pos_];
          Advance(1);
          if (c == '[') ++brackets;
          if (c == ']') --brackets;
          if (c == '>' && brackets <= 0) break;
        }
      } else {
        return;
      }
    }
  }

  std::string ReadName(const char* what) {
    if (AtEnd() || !IsNameStart(text_[pos_])) Fail("expected " + std::string(what));
    const std::size_t start = pos_;
    while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;  // names hold no newline
    return std::string(text_.substr(start, pos_ - start));
  }

  // An entity or character reference after its '&', appended to out.
  void ReadReference(std::string* out) {
    const std::size_t semicolon = text_.find(';', pos_);
    if (semicolon == std::string_view::npos || semicolon - pos_ > 12) {
      Fail("'&' not followed by an entity or character reference");
    }
    const std::string_view ref = text_.substr(pos_, semicolon - pos_);
    if (ref == "lt") {
      out->push_back('<');
    } else if (ref == "gt") {
      out->push_back('>');
    } else if (ref == "amp") {
      out->push_back('&');
    } else if (ref == "quot") {
      out->push_back('"');
    } else if (ref == "apos") {
      out->push_back('\'');
    } else if (ref.size() >= 2 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      const std::string_view digits = ref.substr(hex ? 2 : 1);
      std::uint32_t cp = 0;
      bool ok = !digits.empty();
      for (const char c : digits) {
        int d = -1;
        if (c >= '0' && c <= '9') d = c - '0';
        if (hex && c >= 'a' && c <= 'f') d = c - 'a' + 10;
        if (hex && c >= 'A' && c <= 'F') d = c - 'A' + 10;
        if (d < 0 || cp > 0x10FFFF) {
          ok = false;
          break;
        }
        cp = cp * (hex ? 16u : 10u) + static_cast<std::uint32_t>(d);
      }
      // Char (XML 1.0 §2.2): no NUL, no surrogates, at most U+10FFFF.
      if (!ok || cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        Fail("invalid character reference '&" + std::string(ref) + ";'");
      }
      AppendUtf8(cp, out);
    } else {
      Fail("unknown entity '&" + std::string(ref) + ";'");
    }
    pos_ = semicolon + 1;
  }

  std::string ReadAttributeValue() {
    if (AtEnd() || (text_[pos_] != '"' && text_[pos_] != '\'')) Fail("expected a quoted value");
    const char quote = text_[pos_];
    Advance(1);
    std::string value;
    for (;;) {
      if (AtEnd()) Fail("an attribute value is not closed");
      const char c = text_[pos_];
      if (c == quote) break;
      if (c == '<') Fail("'<' in an attribute value");
      if (c == '&') {
        ++pos_;
        ReadReference(&value);
        continue;
      }
      value.push_back(IsSpace(c) ? ' ' : c);
      Advance(1);
    }
    Advance(1);
    return value;
  }

  // The start tag at '<' with its attributes; whether it was empty (<name/>).
  bool ReadStartTag(XmlElement* e) {
    e->line = line_;
    ++pos_;  // '<'
    e->name = ReadName("an element name after '<'");
    for (;;) {
      const std::size_t before = pos_;
      SkipSpace();
      if (LookingAt("/>")) {
        pos_ += 2;
        return true;
      }
      if (LookingAt(">")) {
        pos_ += 1;
        return false;
      }
      if (AtEnd()) Fail("the start tag <" + e->name + "> is not closed");
      if (pos_ == before) Fail("expected whitespace, '>' or '/>' in <" + e->name + ">");
      std::string key = ReadName("an attribute name");
      SkipSpace();
      if (!LookingAt("=")) Fail("attribute '" + key + "' of <" + e->name + "> has no '='");
      ++pos_;
      SkipSpace();
      std::string value = ReadAttributeValue();
      if (e->Attribute(key) != nullptr)
        Fail("attribute '" + key + "' repeated in <" + e->name + ">");
      e->attributes.emplace_back(std::move(key), std::move(value));
    }
  }

  // The element at '<' and its content. Iterative (a stack of open elements), so that the
  // nesting depth is bounded by kMaxXmlDepth, not by the call stack.
  void ReadElement(XmlElement* root) {
    std::vector<XmlElement*> open;
    if (!ReadStartTag(root)) open.push_back(root);
    while (!open.empty()) {
      // Character data up to the next markup.
      const std::size_t next = text_.find('<', pos_);
      if (next == std::string_view::npos) {
        Advance(text_.size() - pos_);
        Fail("element <" + open.back()->name + "> (line " + std::to_string(open.back()->line) +
             ") is not closed");
      }
      Advance(next - pos_);
      if (LookingAt("<!--")) {
        SkipPast("-->", "a comment");
      } else if (LookingAt("<![CDATA[")) {
        SkipPast("]]>", "a CDATA section");
      } else if (LookingAt("<?")) {
        SkipPast("?>", "a processing instruction");
      } else if (LookingAt("</")) {
        pos_ += 2;
        const std::string name = ReadName("an element name after '</'");
        SkipSpace();
        if (!LookingAt(">")) Fail("the end tag </" + name + "> is not closed");
        ++pos_;
        if (name != open.back()->name) {
          Fail("end tag </" + name + "> does not match <" + open.back()->name + "> (line " +
               std::to_string(open.back()->line) + ")");
        }
        open.pop_back();
      } else {
        if (static_cast<int>(open.size()) >= kMaxXmlDepth)
          Fail("elements nested deeper than " + std::to_string(kMaxXmlDepth));
        XmlElement& child = open.back()->children.emplace_back();
        // Pointers to the open elements stay valid: only the innermost one gains children.
        if (!ReadStartTag(&child)) open.push_back(&child);
      }
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

XmlElement ReadXml(std::string_view text) { return Reader(text).Read(); }

}  // namespace saltus::tools
