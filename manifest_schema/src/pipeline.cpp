//===- manifest_schema/src/pipeline.cpp - MLIR textual pass pipelines -----===//
//
// A recursive-descent parser for the syntax of MLIR's textual pass pipelines
// (see ireepkg/pipeline.h). It accepts what MLIR's TextualPipeline parser
// and its pass-option splitter accept, minus what those would misread:
// names must be identifiers, option names must not be separated from '=' by
// spaces, options must be separated by spaces (not tabs or newlines), quotes
// must be closed, and a nested pipeline must not be empty.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/pipeline.h"
#include "ireepkg/base/text.h"

#include <cstdio>
#include <set>

namespace ireepkg {

namespace {

/// Nested pipelines deeper than this are refused (real ones nest about 5
/// levels; the limit keeps hostile input from exhausting the stack).
constexpr size_t kMaxNesting = 100;

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}
bool isNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isNameChar(char c) {
  return isNameStart(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}
bool isQuote(char c) { return c == '"' || c == '\''; }

/// A character as messages name it: 'x', "'", tab, newline, byte 0xC3.
std::string describe(char c) {
  switch (c) {
  case ' ':
    return "space";
  case '\t':
    return "tab";
  case '\n':
    return "newline";
  case '\r':
    return "carriage return";
  case '\v':
  case '\f':
    return "whitespace";
  default:
    break;
  }
  if (c == '\'')
    return "\"'\"";
  auto u = static_cast<unsigned char>(c);
  if (u > 0x20 && u < 0x7f)
    return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02X", u);
  return buf;
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

struct Failure {
  PipelineError error;
};

[[noreturn]] void fail(size_t column, std::string message) {
  throw Failure{PipelineError{column, std::move(message)}};
}

class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  PassPipeline parse() {
    PassPipeline out;
    skipSpace();
    if (atEnd())
      fail(1, "the pipeline is empty");
    parseElements(0, out.elements, nullptr);
    return out;
  }

private:
  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  size_t column() const { return pos_ + 1; }
  size_t endColumn() const { return text_.size() + 1; }
  void skipSpace() {
    while (!atEnd() && isSpace(peek()))
      ++pos_;
  }

  /// `"cse"`, `the options of "cse"` or `"func.func(...)"`.
  static std::string afterWhat(const PipelineElement &e) {
    if (e.isNested())
      return quoted(e.name + "(...)");
    if (e.hasOptions)
      return "the options of " + quoted(e.name);
    return quoted(e.name);
  }

  /// Parses `element (',' element)*` up to the end of the text (depth 0) or
  /// to the ')' closing `parent` (left unconsumed).
  void parseElements(size_t depth, std::vector<PipelineElement> &out,
                     const PipelineElement *parent) {
    // Column of the ')' of a top-level empty nesting ("builtin.module()"),
    // which is only valid as the whole text.
    size_t emptyClose = 0;
    for (;;) {
      skipSpace();
      if (atEnd())
        fail(endColumn(), "the pipeline ends where a pass name or nested "
                          "pipeline was expected");
      char c = peek();
      if (c == ')' && parent && out.empty())
        return; // an empty nesting; the caller decides
      if (!isNameStart(c)) {
        std::string message = "unexpected " + describe(c) +
                              " where a pass name or nested pipeline was "
                              "expected";
        if (c == '-')
          message += "; write pass names without leading dashes";
        fail(column(), std::move(message));
      }

      PipelineElement element;
      element.column = column();
      size_t start = pos_;
      while (!atEnd() && isNameChar(peek()))
        ++pos_;
      element.name = std::string(text_.substr(start, pos_ - start));
      skipSpace();

      if (!atEnd() && peek() == '(') {
        element.kind = PipelineElement::Kind::Nested;
        size_t openColumn = column();
        if (depth + 1 > kMaxNesting)
          fail(openColumn, "pipelines may nest at most " +
                               std::to_string(kMaxNesting) + " levels deep");
        ++pos_;
        openColumns_.push_back(openColumn);
        parseElements(depth + 1, element.elements, &element);
        openColumns_.pop_back();
        size_t closeColumn = column();
        ++pos_; // the ')'
        if (element.elements.empty()) {
          if (depth > 0 || !out.empty())
            fail(closeColumn, "unexpected ')' where a pass name or nested "
                              "pipeline was expected");
          emptyClose = closeColumn;
        }
        skipSpace();
        if (!atEnd() && peek() == '{')
          fail(column(), "unexpected '{' after " + afterWhat(element) +
                             ": a nested pipeline takes no options");
      } else if (!atEnd() && peek() == '{') {
        parseOptions(element);
        skipSpace();
      }
      out.push_back(std::move(element));

      if (atEnd()) {
        if (parent)
          fail(endColumn(), "expected ')' to close " +
                                quoted(parent->name + "(") +
                                " opened at column " +
                                std::to_string(openColumns_.back()));
        return;
      }
      c = peek();
      if (c == ',') {
        if (emptyClose)
          fail(emptyClose, "unexpected ')' where a pass name or nested "
                           "pipeline was expected");
        ++pos_;
        continue;
      }
      if (c == ')') {
        if (!parent)
          fail(column(), "unexpected ')': no nested pipeline is open");
        return;
      }
      const PipelineElement &last = out.back();
      std::string message =
          "unexpected " + describe(c) + " after " + afterWhat(last) +
          (parent ? ": expected ',' or ')'"
                  : ": expected ',' or the end of the pipeline");
      if (c == '=' && last.isPass() && !last.hasOptions)
        message = "unexpected '=' after " + afterWhat(last) +
                  ": pass options are written in braces, as in " + last.name +
                  "{key=value}";
      fail(column(), std::move(message));
    }
  }

  /// Parses `{...}` after a pass name. As MLIR does, the closing '}' is the
  /// one that balances the '{', counting braces without regard to quotes.
  void parseOptions(PipelineElement &element) {
    size_t openColumn = column();
    ++pos_;
    size_t start = pos_;
    size_t depth = 1;
    for (; !atEnd(); ++pos_) {
      if (peek() == '{')
        ++depth;
      else if (peek() == '}' && --depth == 0)
        break;
    }
    if (atEnd())
      fail(endColumn(), "expected '}' to close the options of " +
                            quoted(element.name) + " opened at column " +
                            std::to_string(openColumn));
    element.hasOptions = true;
    element.optionsText = std::string(text_.substr(start, pos_ - start));
    ++pos_; // the '}'
    splitOptions(element, start);
  }

  /// Splits the options text (starting at `base` in the text) into options.
  void splitOptions(PipelineElement &element, size_t base) {
    std::string_view s = element.optionsText;
    const size_t n = s.size();
    auto col = [&](size_t i) { return base + i + 1; };
    const std::string of = " in the options of " + quoted(element.name);
    size_t i = 0;
    for (;;) {
      while (i < n && isSpace(s[i]))
        ++i;
      if (i == n)
        return;
      char c = s[i];
      if (!isNameStart(c)) {
        std::string message =
            "unexpected " + describe(c) + " where an option name was expected" +
            of;
        if (c == '=' && !element.options.empty() && isSpace(s[i - 1]))
          message += "; write key=value without spaces around '='";
        fail(col(i), std::move(message));
      }
      PassOption option;
      option.column = col(i);
      size_t keyStart = i;
      while (i < n && isNameChar(s[i]))
        ++i;
      option.key = std::string(s.substr(keyStart, i - keyStart));
      const std::string ofValue =
          " in the value of option " + quoted(option.key) + " of " +
          quoted(element.name);

      if (i < n && s[i] == '=') {
        option.hasValue = true;
        size_t valueStart = ++i;
        while (i < n && !isSpace(s[i])) {
          char d = s[i];
          if (isQuote(d)) {
            i = closeQuote(element, s, i, base, ofValue);
            continue;
          }
          if (d == '{') {
            size_t open = i;
            size_t depth = 1;
            for (++i; i < n && depth > 0;) {
              if (isQuote(s[i])) {
                i = closeQuote(element, s, i, base, ofValue);
                continue;
              }
              if (s[i] == '{')
                ++depth;
              else if (s[i] == '}')
                --depth;
              ++i;
            }
            if (depth > 0)
              fail(col(n), "expected '}' to close '{' opened at column " +
                               std::to_string(col(open)) + ofValue);
            continue;
          }
          if (d == '}')
            fail(col(i), "unexpected '}'" + ofValue);
          ++i;
        }
        option.value = std::string(s.substr(valueStart, i - valueStart));
      } else if (i < n && !isSpace(s[i])) {
        fail(col(i), "unexpected " + describe(s[i]) + " after option name " +
                         quoted(option.key) + of +
                         ": expected '=' or a space");
      }
      element.options.push_back(std::move(option));

      // MLIR ends an option at a space only; a tab or newline between two
      // options would join them.
      if (i < n) {
        size_t w = i;
        bool space = false;
        for (; w < n && isSpace(s[w]); ++w)
          space = space || s[w] == ' ';
        if (!space && w < n)
          fail(col(i), "unexpected " + describe(s[i]) + of +
                           ": separate options with spaces");
        i = w;
      }
    }
  }

  /// The index after the quote closing the one at `i` in the options text.
  size_t closeQuote(const PipelineElement &element, std::string_view s,
                    size_t i, size_t base, const std::string &ofValue) {
    char q = s[i];
    size_t close = s.find(q, i + 1);
    if (close != std::string_view::npos)
      return close + 1;
    std::string message =
        "unterminated " + describe(q) + ofValue;
    // The quote does close, after the '}' that ended the options: MLIR
    // matched that brace although it was quoted.
    if (text_.find(q, base + s.size()) != std::string_view::npos)
      message += "; MLIR ends pass options at the '}' that balances the "
                 "'{', even inside quotes";
    fail(base + i + 1, std::move(message));
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::vector<size_t> openColumns_; ///< columns of the open '('s
};

void collectPassNames(const std::vector<PipelineElement> &elements,
                      std::set<std::string> &seen,
                      std::vector<std::string> &out) {
  for (const PipelineElement &e : elements) {
    if (e.isNested())
      collectPassNames(e.elements, seen, out);
    else if (seen.insert(e.name).second)
      out.push_back(e.name);
  }
}

std::string join(const std::vector<PipelineElement> &elements) {
  std::string out;
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i)
      out += ',';
    out += elements[i].str();
  }
  return out;
}


/// The index of the '}' balancing the '{' at `open`, skipping quoted text,
/// or npos.
size_t matchingBrace(std::string_view s, size_t open) {
  size_t depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (isQuote(s[i])) {
      size_t close = s.find(s[i], i + 1);
      if (close == std::string_view::npos)
        return std::string_view::npos;
      i = close;
    } else if (s[i] == '{') {
      ++depth;
    } else if (s[i] == '}' && --depth == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

} // namespace

std::string PassOption::literal() const {
  std::string_view s = trim(value);
  if (s.size() >= 2 && isQuote(s.front()) && s.back() == s.front())
    return std::string(trim(s.substr(1, s.size() - 2)));
  if (!s.empty() && s.front() == '{' && matchingBrace(s, 0) == s.size() - 1)
    return std::string(trim(s.substr(1, s.size() - 2)));
  return std::string(s);
}

std::string PipelineElement::str() const {
  if (isNested())
    return name + "(" + join(elements) + ")";
  if (hasOptions)
    return name + "{" + optionsText + "}";
  return name;
}

std::string PassPipeline::str() const { return join(elements); }

std::string PipelineError::str() const {
  return message + " (at column " + std::to_string(column) + ")";
}

std::expected<PassPipeline, PipelineError>
parsePassPipeline(std::string_view text) {
  try {
    return Parser(text).parse();
  } catch (const Failure &f) {
    return std::unexpected(f.error);
  }
}

std::vector<std::string> pipelinePassNames(const PassPipeline &pipeline) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  collectPassNames(pipeline.elements, seen, out);
  return out;
}

std::string composePassPipelines(std::span<const PassPipeline> fragments) {
  std::vector<PipelineElement> elements;
  for (const PassPipeline &f : fragments) {
    const std::vector<PipelineElement> &add =
        f.anchor() == "builtin.module" ? f.elements.front().elements
                                       : f.elements;
    // A fragment that is one empty anchor ("func.func()") runs nothing; kept
    // as it is, it would be an empty nested pipeline, which is invalid.
    for (const PipelineElement &e : add)
      if (!(e.isNested() && e.elements.empty()))
        elements.push_back(e);
  }
  return "builtin.module(" + join(elements) + ")";
}

std::expected<std::string, PipelineFragmentError>
composePassPipelines(std::span<const std::string> fragments) {
  std::vector<PassPipeline> parsed;
  parsed.reserve(fragments.size());
  for (size_t i = 0; i < fragments.size(); ++i) {
    auto p = parsePassPipeline(fragments[i]);
    if (!p)
      return std::unexpected(PipelineFragmentError{i, std::move(p.error())});
    parsed.push_back(std::move(*p));
  }
  return composePassPipelines(std::span<const PassPipeline>(parsed));
}

} // namespace ireepkg
