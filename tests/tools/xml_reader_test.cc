// The XML reader of URDF files (tools/xml_reader.h): elements, attributes with references and
// their lines from a document with every kind of markup it skips; each rejected construct with
// the line where the reader stopped.
#include "tools/xml_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace saltus::tools {
namespace {

TEST(XmlReader, ReadsElementsAttributesAndLines) {
  const XmlElement root = ReadXml(
      "\xEF\xBB\xBF<?xml version=\"1.0\"?>\n"
      "<!DOCTYPE robot [ <!ELEMENT robot ANY> ]>\n"
      "<!-- a comment with <tags> -->\n"
      "<robot name='r &amp; &lt;s&gt;'>\n"
      "  text <![CDATA[ <not an element/> ]]> <?pi ?>\n"
      "  <link name=\"a\tb\n\"\n"
      "        value=\"&#65;&#x42;&#xe9;&quot;&apos;\"/>\n"
      "  <joint name=\"j\"><parent link=\"a\"></parent><!-- -->\n"
      "  </joint >\n"
      "</robot>\n<!-- trailing -->\n");
  EXPECT_EQ(root.name, "robot");
  EXPECT_EQ(root.line, 4);
  ASSERT_NE(root.Attribute("name"), nullptr);
  EXPECT_EQ(*root.Attribute("name"), "r & <s>");
  ASSERT_EQ(root.children.size(), 2u);
  const XmlElement& link = root.children[0];
  EXPECT_EQ(link.line, 6);
  EXPECT_EQ(*link.Attribute("name"), "a b ");  // tab and newline normalized (XML 1.0 §3.3.3)
  EXPECT_EQ(*link.Attribute("value"), "AB\xC3\xA9\"'");
  EXPECT_EQ(link.Attribute("missing"), nullptr);
  const XmlElement* joint = root.Child("joint");
  ASSERT_NE(joint, nullptr);
  EXPECT_EQ(joint->line, 9);  // after the newline inside link's name and the one after it
  ASSERT_NE(joint->Child("parent"), nullptr);
  EXPECT_EQ(*joint->Child("parent")->Attribute("link"), "a");
  EXPECT_EQ(root.Child("visual"), nullptr);
}

TEST(XmlReader, RejectsWhatIsNotWellFormedAtItsLine) {
  const auto expect_error = [](const std::string& text, int line, const std::string& message) {
    try {
      ReadXml(text);
      ADD_FAILURE() << "no error for " << text;
    } catch (const XmlError& e) {
      EXPECT_EQ(e.line(), line) << text;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expect_error("", 1, "no root element");
  expect_error("\n\nhello", 3, "text before the root element");
  expect_error("<a>\n<b>\n", 3, "element <b> (line 2) is not closed");
  expect_error("<a>\n<b></a>", 2, "end tag </a> does not match <b> (line 2)");
  expect_error("<a x='1' x='2'/>", 1, "attribute 'x' repeated in <a>");
  expect_error("<a x='1'y='2'/>", 1, "expected whitespace, '>' or '/>' in <a>");
  expect_error("<a x=1/>", 1, "expected a quoted value");
  expect_error("<a x='<'/>", 1, "'<' in an attribute value");
  expect_error("<a x='&nbsp;'/>", 1, "unknown entity '&nbsp;'");
  expect_error("<a x='&#0;'/>", 1, "invalid character reference '&#0;'");
  expect_error("<a x='&#xD800;'/>", 1, "invalid character reference");
  expect_error("<a x='&#99999999999;'/>", 1, "invalid character reference");
  expect_error("<a x='& b'/>", 1, "'&' not followed by an entity or character reference");
  expect_error("<a x='1", 1, "an attribute value is not closed");
  expect_error("<a\n x", 2, "attribute 'x' of <a> has no '='");
  expect_error("<a><!-- never closed </a>", 1, "a comment is not closed");
  expect_error("<a/>\n<b/>", 2, "a second element after the root element <a>");
  expect_error("<a/>\ntext", 2, "text after the root element <a>");
  expect_error("<1a/>", 1, "expected an element name after '<'");
  std::string deep;
  for (int i = 0; i <= kMaxXmlDepth; ++i) deep += "<e>";
  expect_error(deep, 1, "elements nested deeper than 256");
}

}  // namespace
}  // namespace saltus::tools
